import { describe, expect, test } from 'vitest';
import { decidePermission, matchRules, type PermissionInput, toolDefinitionHash } from '../src/permissions';

describe('matchRules / decidePermission (pure)', () => {
  const rules = {
    allow: ['mcp__github__*', 'mcp__fs__read'],
    deny: ['mcp__github__delete_*'],
    ask: ['mcp__fs__*'],
  };
  test.each([
    ['mcp__github__list_issues', 'allow'],
    ['mcp__github__delete_repo', 'deny'], // deny wins over allow
    ['mcp__fs__read', 'ask'], // ask wins over allow
    ['mcp__fs__write', 'ask'],
    ['mcp__other__x', 'none'],
    ['ReadOutput', 'none'],
  ])('%s -> %s', (name, kind) => {
    expect(matchRules(rules, name).kind).toBe(kind);
  });

  const h = 'hash-1';
  const cases: [string, PermissionInput, string][] = [
    [
      'deny rule wins over everything',
      {
        fullName: 'a',
        rules: { deny: ['a'], allow: ['a'] },
        autoApproved: true,
        alwaysAsk: true,
        rememberedHash: h,
        definitionHash: h,
      },
      'deny',
    ],
    [
      'always-ask beats allow rules and memory',
      { fullName: 'a', rules: { allow: ['*'] }, alwaysAsk: true, rememberedHash: h, definitionHash: h },
      'ask:always-ask',
    ],
    [
      'ask rule beats allow and approveTools',
      { fullName: 'a', rules: { ask: ['a'], allow: ['a'] }, autoApproved: true },
      'ask:ask-rule',
    ],
    ['allow rule', { fullName: 'a', rules: { allow: ['a'] } }, 'allow:rule'],
    ['trusted approveTools', { fullName: 'a', autoApproved: true }, 'allow:approve-tools'],
    [
      'remembered with the same definition',
      { fullName: 'a', rememberedHash: h, definitionHash: h },
      'allow:remembered',
    ],
    [
      'remembered but the definition changed',
      { fullName: 'a', rememberedHash: h, definitionHash: 'other' },
      'ask:definition-changed',
    ],
    ['nothing matches', { fullName: 'a' }, 'ask:no-rule'],
  ];
  test.each(cases)('%s', (_label, input, expected) => {
    const d = decidePermission(input);
    const got = d.kind === 'deny' ? 'deny' : `${d.kind}:${d.reason}`;
    expect(got).toBe(expected);
  });

  test('the definition hash changes with name, description or schema, not with key order', () => {
    const base = {
      name: 'mcp__a__b',
      description: 'd',
      inputSchema: { type: 'object', properties: { x: { type: 'string' } } },
    };
    const same = {
      inputSchema: { properties: { x: { type: 'string' } }, type: 'object' },
      description: 'd',
      name: 'mcp__a__b',
    };
    expect(toolDefinitionHash(same)).toBe(toolDefinitionHash(base));
    expect(toolDefinitionHash({ ...base, description: 'e' })).not.toBe(toolDefinitionHash(base));
    expect(toolDefinitionHash({ ...base, inputSchema: {} })).not.toBe(toolDefinitionHash(base));
  });
});
