import { deepFreeze } from '@wave/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeInstructionsDelta } from '../src/delta';
import { hashInstructions } from '../src/hash';
import { latestInstructionMarkers } from '../src/markers';
import { truncateInstructions } from '../src/render';
import type { InstructionsMessage, ServerInstructionsState } from '../src/types';

const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zh-服务', 'we"ird'];
const BODIES = [
  'Rate limit: 10 requests per minute.',
  'Line one\nLine two\n\n  indented\r\nwindows line',
  '调用前必须先登录。',
  'emoji 😀 at the end 😀',
  'x'.repeat(40),
  'y'.repeat(70),
];
const MAX = 32; // small limit so truncation happens often

/** Texts carry their server's name, so a leak of a denied server's text is visible. */
const textArb = (name: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...BODIES).map((b) => `<<${name}>> ${b}`) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, '', '  \n ') },
  );

const serverArb = (name: string): fc.Arbitrary<ServerInstructionsState> =>
  fc.record({
    name: fc.constant(name),
    available: fc.boolean(),
    permitted: fc.oneof(
      { weight: 4, arbitrary: fc.constant(true) },
      { weight: 1, arbitrary: fc.constant(false) },
    ),
    instructions: textArb(name),
  });

/** A set of servers with unique names, in random order. */
const serversArb: fc.Arbitrary<ServerInstructionsState[]> = fc
  .subarray(NAMES)
  .chain((names) => fc.tuple(...names.map(serverArb)))
  .chain((list) => fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }));

const filler = fc.constantFrom<object>(
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
  { role: 'tool', tool_call_id: 't', content: 'ok' },
  { type: 'custom-host-shape' },
);

/**
 * A history produced the way a host produces one: turns of filler messages,
 * each turn appending the delta for that turn's server states; then maybe a
 * compaction (drop a prefix), a rewind (drop a suffix) or random drops.
 */
const historyArb: fc.Arbitrary<object[]> = fc
  .record({
    turns: fc.array(fc.tuple(serversArb, fc.array(filler, { maxLength: 3 })), { maxLength: 8 }),
    edit: fc.constantFrom('none', 'compact', 'rewind', 'drop'),
    cut: fc.nat(),
    dropMask: fc.array(fc.boolean(), { maxLength: 60 }),
  })
  .map(({ turns, edit, cut, dropMask }) => {
    let history: object[] = [];
    for (const [servers, messages] of turns) {
      history.push(...messages);
      const delta = computeInstructionsDelta(history, servers, { maxChars: MAX });
      if (delta) history.push(delta);
    }
    const at = history.length === 0 ? 0 : cut % (history.length + 1);
    if (edit === 'compact') history = [{ role: 'user', content: '[summary]' }, ...history.slice(at)];
    if (edit === 'rewind') history = history.slice(0, at);
    if (edit === 'drop') history = history.filter((_, i) => dropMask[i] !== true);
    return history;
  });

const hasText = (s: ServerInstructionsState) =>
  typeof s.instructions === 'string' && /\S/.test(s.instructions);
const wanted = (s: ServerInstructionsState) => s.available && s.permitted && hasText(s);
const run = (h: readonly object[], s: readonly ServerInstructionsState[]) =>
  computeInstructionsDelta(h, s, { maxChars: MAX });

const RUNS = { numRuns: 400 };

describe('properties', () => {
  it('idempotent: after appending the delta, the same servers give null', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const delta = run(history, servers);
        const next = delta ? [...history, delta] : history;
        expect(run(next, servers)).toBeNull();
      }),
      RUNS,
    );
  });

  it('never mutates its inputs (deep-frozen inputs, compared with a clone)', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const before = structuredClone({ history, servers });
        deepFreeze(history);
        deepFreeze(servers);
        run(history, servers);
        computeInstructionsDelta(history, servers);
        expect({ history, servers }).toEqual(before);
      }),
      RUNS,
    );
  });

  it('converges: after the delta, the latest marker of every server matches its state', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const delta = run(history, servers);
        const latest = latestInstructionMarkers(delta ? [...history, delta] : history);
        const names = new Set(servers.map((s) => s.name));
        for (const s of servers) {
          const last = latest.get(s.name);
          if (wanted(s)) {
            expect(last).toMatchObject({ state: 'announced', hash: hashInstructions(s.instructions!) });
          } else if (!s.available || !hasText(s)) {
            expect(last?.state).not.toBe('announced');
          }
        }
        for (const [name, last] of latest) if (!names.has(name)) expect(last.state).toBe('retired');
      }),
      RUNS,
    );
  });

  it('minimal: announces only what is not already announced, retires only what was announced, never empty', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const delta = run(history, servers);
        if (delta === null) return;
        const latest = latestInstructionMarkers(history);
        const { announced, retired } = delta.mcpInstructions;
        expect(announced.length + retired.length).toBeGreaterThan(0);
        for (const { server, hash } of announced) {
          const last = latest.get(server);
          expect(last?.state === 'announced' && last.hash === hash).toBe(false);
        }
        for (const server of retired) expect(latest.get(server)?.state).toBe('announced');
        const both = announced.filter((a) => retired.includes(a.server));
        expect(both).toEqual([]);
      }),
      RUNS,
    );
  });

  it('every announced server has its (possibly truncated) text in the content, labelled; every retired server is named', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const delta = run(history, servers);
        if (delta === null) return;
        const byName = new Map(servers.map((s) => [s.name, s]));
        for (const { server } of delta.mcpInstructions.announced) {
          const text = byName.get(server)!.instructions!;
          const { shown, truncated } = truncateInstructions(text, MAX);
          expect(shown.length).toBeLessThanOrEqual(MAX);
          expect(delta.content).toContain(
            `<mcp-server-instructions server=${JSON.stringify(server)}>\n${shown}`,
          );
          if (truncated) {
            expect(delta.content).toContain(
              `MCP server ${JSON.stringify(server)} were truncated: showing the first ${shown.length} of ${text.length} characters.`,
            );
          }
        }
        for (const server of delta.mcpInstructions.retired) {
          expect(delta.content).toContain(`- MCP server ${JSON.stringify(server)} `);
        }
      }),
      RUNS,
    );
  });

  it('never announces a denied server, and a denied server text never reaches the content', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const delta = run(history, servers);
        if (delta === null) return;
        for (const s of servers.filter((x) => !x.permitted)) {
          expect(delta.mcpInstructions.announced.map((a) => a.server)).not.toContain(s.name);
          expect(delta.content).not.toContain(`<<${s.name}>>`);
        }
      }),
      RUNS,
    );
  });

  it('deterministic: the order of `servers` and repeated calls do not change the result', () => {
    fc.assert(
      fc.property(historyArb, serversArb, fc.infiniteStream(fc.nat()), (history, servers, seeds) => {
        const a = run(history, servers);
        const shuffled = [...servers].sort(() => (seeds.next().value % 3) - 1);
        expect(run(history, shuffled)).toEqual(a);
        expect(run(history, servers)).toEqual(a);
        if (a) {
          const names = a.mcpInstructions.announced.map((x) => x.server);
          expect(names).toEqual([...names].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
        }
      }),
      RUNS,
    );
  });

  it('losing every marker of a server (compaction) makes it announced again when it is wanted', () => {
    fc.assert(
      fc.property(historyArb, serversArb, (history, servers) => {
        const delta = run(history, servers);
        const full = delta ? [...history, delta] : history;
        for (const s of servers.filter(wanted)) {
          // Strip this server from every marker, as if the messages carrying them were compacted away.
          const compacted = full.filter((m) => {
            const mk = (m as Partial<InstructionsMessage>).mcpInstructions;
            return !mk || (!mk.announced?.some((a) => a.server === s.name) && !mk.retired?.includes(s.name));
          });
          const again = run(compacted, servers);
          expect(again?.mcpInstructions.announced.map((a) => a.server)).toContain(s.name);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('matches an independent model over a sequence of turns (no compaction)', () => {
    fc.assert(
      fc.property(fc.array(serversArb, { minLength: 1, maxLength: 12 }), (turns) => {
        const history: object[] = [];
        // Model: server -> hash of the announcement in force (absent = none in force).
        const inForce = new Map<string, string>();
        for (const servers of turns) {
          const expectedAnnounce: string[] = [];
          const expectedRetire: string[] = [];
          for (const s of servers) {
            const current = inForce.get(s.name);
            if (wanted(s)) {
              if (current !== hashInstructions(s.instructions!)) expectedAnnounce.push(s.name);
            } else if (current !== undefined && (!s.available || !hasText(s))) {
              expectedRetire.push(s.name);
            }
          }
          for (const name of inForce.keys())
            if (!servers.some((s) => s.name === name)) expectedRetire.push(name);

          const delta = run(history, servers);
          history.push({ role: 'user', content: 'turn' });
          if (delta) history.push(delta);
          expect((delta?.mcpInstructions.announced.map((a) => a.server) ?? []).sort()).toEqual(
            expectedAnnounce.sort(),
          );
          expect([...(delta?.mcpInstructions.retired ?? [])].sort()).toEqual(expectedRetire.sort());

          for (const name of expectedRetire) inForce.delete(name);
          for (const name of expectedAnnounce) {
            inForce.set(name, hashInstructions(servers.find((s) => s.name === name)!.instructions!));
          }
        }
      }),
      RUNS,
    );
  });
});
