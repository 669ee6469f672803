import { describe, expect, it } from 'vitest';
import {
  clientCapabilities,
  featuresFor,
  fillElicitationDefaults,
  ServerLogs,
  workdirRoots,
} from '../src/client-features';

const schema = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, default: 'John Doe' },
    age: { type: 'integer' as const, default: 30 },
    verified: { type: 'boolean' as const, default: true },
    note: { type: 'string' as const },
  },
};

describe('fillElicitationDefaults (SEP-1034)', () => {
  it.each([
    ['nothing given: every default', undefined, { name: 'John Doe', age: 30, verified: true }],
    ['given values win', { name: 'Ada', verified: false }, { name: 'Ada', age: 30, verified: false }],
    ['a field without default stays out', {}, { name: 'John Doe', age: 30, verified: true }],
    ['extra given fields are kept', { note: 'x' }, { name: 'John Doe', age: 30, verified: true, note: 'x' }],
  ])('%s', (_name, content, expected) => {
    const input =
      content === undefined ? { action: 'accept' as const } : { action: 'accept' as const, content };
    const before = JSON.stringify(input);
    expect(fillElicitationDefaults(schema, input)).toEqual({ action: 'accept', content: expected });
    expect(JSON.stringify(input)).toBe(before);
  });

  it.each(['decline', 'cancel'] as const)('%s carries no content', (action) => {
    expect(fillElicitationDefaults(schema, { action, content: { name: 'x' } })).toEqual({ action });
  });
});

describe('client capabilities', () => {
  const noop = () => ({ action: 'decline' as const });
  it.each([
    [{}, {}],
    [{ roots: workdirRoots('/w') }, { roots: { listChanged: true } }],
    [{ onElicitation: noop }, { elicitation: {} }],
    [
      {
        onSampling: () => ({
          role: 'assistant' as const,
          model: 'm',
          content: { type: 'text' as const, text: '' },
        }),
      },
      { sampling: {} },
    ],
  ])('%o declares %o', (features, caps) => {
    expect(clientCapabilities(features)).toEqual(caps);
  });

  it('a per-server override replaces only the keys it names', () => {
    const pool = { onElicitation: noop, roots: workdirRoots('/w') };
    expect(featuresFor('a', pool, { b: { roots: false } })).toBe(pool);
    const b = featuresFor('b', pool, { b: { roots: false } });
    expect(b.roots).toBe(false);
    expect(b.onElicitation).toBe(noop);
    expect(featuresFor('c', pool, { c: { onElicitation: undefined } }).onElicitation).toBeUndefined();
  });

  it('the default root is the workdir as a file:// URI', () => {
    expect(workdirRoots('/home/u/my project')()).toEqual([
      { uri: 'file:///home/u/my%20project', name: 'my project' },
    ]);
  });
});

describe('ServerLogs', () => {
  it('keeps the last N per key, copies out', () => {
    const logs = new ServerLogs(2);
    for (let i = 0; i < 5; i++) logs.add('k', { server: 's', level: 'info', data: i, at: i });
    logs.add('other', { server: 't', level: 'error', data: 'x', at: 9 });
    expect(logs.get('k').map((e) => e.data)).toEqual([3, 4]);
    expect(logs.get('other')).toHaveLength(1);
    expect(logs.get('none')).toEqual([]);
  });
});
