/**
 * The gateway over a real pool and the real server-memory from npm: the
 * declaration does not change when the server connects, search finds its
 * tools, call runs them with JSON-string and object arguments, status
 * reports the pool. The pool call here stands in for the agent's funnel.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '@wave/mcp-pool';
import {
  findProcessesByMarker,
  isPidAlive,
  killPids,
  makeTempDir,
  realServer,
  type TempDir,
} from '@wave/testkit';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  createGateway,
  type GatewayDeps,
  type GatewayTool,
  gatewayDeclaration,
} from '../src/exposure/gateway';
import type { ContentBlock } from '../src/model';

let ns: string;
let tmp: TempDir | undefined;
let pool: McpPool | undefined;

beforeEach(async () => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:gateway-${randomUUID().slice(0, 8)}`;
  tmp = await makeTempDir('agent-gateway');
});

afterEach(async () => {
  await pool?.destroy();
  pool = undefined;
  await tmp?.cleanup();
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

function depsOf(p: McpPool): GatewayDeps {
  return {
    listTools: () =>
      p.list().flatMap((rec) =>
        rec.status === 'connected'
          ? rec.tools.map(
              (t): GatewayTool => ({
                server: rec.name,
                name: t.name,
                fullName: `mcp__${rec.name}__${t.name}`,
                description: t.description,
                inputSchema: t.inputSchema,
              }),
            )
          : [],
      ),
    status: () =>
      p.list().map((rec) => ({
        name: rec.name,
        status: rec.status,
        toolCount: rec.tools.length,
        ...(rec.error ? { error: rec.error.message } : {}),
      })),
    call: async (fullName, args, signal) => {
      const [, server, tool] = fullName.split('__') as [string, string, string];
      const result = await p.callTool(server, tool, args, { signal });
      const blocks = (result.content ?? []) as { type: string; text?: string }[];
      const content: ContentBlock[] = blocks
        .filter((b) => b.type === 'text')
        .map((b) => ({ type: 'text', text: b.text ?? '' }));
      return result.isError ? { content, isError: true } : { content };
    },
  };
}

const textOf = (content: string | ContentBlock[]): string =>
  typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');

test('search, describe, call and status against server-memory; the declaration never changes', async () => {
  const memoryFile = join((tmp as TempDir).path, 'memory.jsonl');
  const { servers } = mergeSources(
    [{ source: 'user', servers: { memory: realServer('memory', { memoryFilePath: memoryFile }) } }],
    { workdir: (tmp as TempDir).path },
  );
  pool = McpPool.create({ servers, markerNamespace: ns });
  const gateway = createGateway(depsOf(pool));
  const before = JSON.stringify(gatewayDeclaration);

  expect(textOf((await gateway.run({ action: 'search', query: 'remember a fact' })).content)).toBe(
    'No MCP tools are available. Use action "status" to see the servers.',
  );
  expect((await gateway.run({ action: 'status' })).content).toMatch(/^memory: \w+, 0 tools$/);

  const rec = await pool.connect('memory');
  expect(rec.status).toBe('connected');
  expect(JSON.stringify(gatewayDeclaration)).toBe(before);

  expect((await gateway.run({ action: 'status' })).content).toBe(
    `memory: connected, ${rec.tools.length} tools`,
  );
  const found = textOf(
    (await gateway.run({ action: 'search', query: 'remember that Alice likes tea' })).content,
  );
  expect(found.split('\n')[0]).toMatch(/^mcp__memory__(create_entities|add_observations)\(/);
  expect(textOf((await gateway.run({ action: 'search', query: 'mcp__memory__read_graph' })).content)).toMatch(
    /^mcp__memory__read_graph\(\)/,
  );
  const described = textOf(
    (await gateway.run({ action: 'describe', name: 'mcp__memory__create_entities' })).content,
  );
  expect(described).toContain('"entities"');

  const created = await gateway.run({
    action: 'call',
    name: 'mcp__memory__create_entities',
    arguments: JSON.stringify({
      entities: [{ name: 'Alice', entityType: 'person', observations: ['likes tea'] }],
    }),
  });
  expect(created.isError).toBeUndefined();
  const observed = await gateway.run({
    action: 'call',
    name: 'mcp__memory__add_observations',
    arguments: { observations: [{ entityName: 'Alice', contents: ['works at Acme'] }] },
  });
  expect(observed.isError).toBeUndefined();
  const graph = textOf((await gateway.run({ action: 'call', name: 'mcp__memory__read_graph' })).content);
  expect(graph).toContain('likes tea');
  expect(graph).toContain('works at Acme');

  expect(JSON.stringify(gatewayDeclaration)).toBe(before);
});
