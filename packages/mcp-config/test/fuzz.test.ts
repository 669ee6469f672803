import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serverIdentity } from '../src/identity';
import { type LoadMcpConfigResult, loadMcpConfig } from '../src/load';
import { SERVER_NAME_PATTERN } from '../src/validate';

/** Valid servers of the sources around the fuzzed file; their names never come out of the generators below. */
const CONSTRUCTOR = {
  'keep-c1': { command: 'node', args: ['c1.js'] },
  'keep-c2': { url: 'https://c2.example/mcp' },
};
const PROJECT = { 'keep-p1': { command: 'p1' }, 'keep-p2': { type: 'sse', url: 'https://p2.example/sse' } };
const USER = { 'keep-u1': { command: 'u1', env: { A: 'a' } }, 'keep-u2': { url: 'https://u2.example/mcp' } };
const PLUGIN = { 'keep-g1': { command: '${CLAUDE_PLUGIN_ROOT}/g1' } };

const VALID_DOC = JSON.stringify(
  {
    mcpServers: {
      a: { command: 'npx', args: ['-y', 'x', '${HOME}'], env: { T: '${TOKEN:-none}' } },
      b: { type: 'http', url: 'https://h/mcp', headers: { Authorization: 'Bearer ${T}' } },
      c: { type: 'sse', url: 'https://h/sse', lifecycle: 'eager', approveTools: ['get_*'] },
    },
  },
  null,
  2,
);

const key = fc.oneof(
  fc.constantFrom(
    'type',
    'command',
    'args',
    'env',
    'cwd',
    'url',
    'headers',
    'lifecycle',
    'idleTimeoutMs',
    'approveTools',
    'description',
    '__proto__',
    'constructor',
  ),
  fc.string({ maxLength: 8 }),
);
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    'stdio',
    'http',
    'sse',
    'ws',
    '../x',
    'https://h/${X}',
    '${A:-b}',
    '${',
    'ftp://x',
    '\0',
    'a\r\nb',
  ),
);
const entry = fc.oneof(fc.dictionary(key, value, { maxKeys: 8 }), fc.jsonValue({ maxDepth: 2 }));
const name = fc.oneof(
  fc.string({ maxLength: 70 }),
  fc.constantFrom('a', 'a__b', '__proto__', 'x'.repeat(65), 'ok-name'),
);
const serversDoc = fc
  .dictionary(name, entry, { maxKeys: 40 })
  .map((servers) => JSON.stringify({ mcpServers: servers }, null, 2));
const randomJson = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
const mutated = fc
  .array(
    fc.record({ at: fc.nat(), del: fc.nat({ max: 6 }), insert: fc.string({ maxLength: 6, unit: 'binary' }) }),
    { minLength: 1, maxLength: 8 },
  )
  .map((ops) =>
    ops.reduce((doc, op) => {
      const at = op.at % (doc.length + 1);
      return doc.slice(0, at) + op.insert + doc.slice(at + op.del);
    }, VALID_DOC),
  );
/** Mostly valid servers, many of them, some named like the other sources' ones: precedence and the limit under fuzz. */
const validish = fc
  .dictionary(
    fc.oneof(
      fc.stringMatching(/^[a-z0-9-]{1,6}$/),
      fc.constantFrom('keep-c1', 'keep-p1', 'keep-u1', 'keep-g1'),
    ),
    fc.oneof(
      fc.record({ command: fc.constantFrom('node', 'npx', 'uvx') }),
      fc.record({ url: fc.constantFrom('https://a/mcp', 'http://127.0.0.1:1/mcp') }),
      fc.record({ type: fc.constantFrom('sse', 'http'), url: fc.constant('https://s/sse') }),
    ),
    { maxKeys: 45 },
  )
  .map((servers) => JSON.stringify({ mcpServers: servers }));
const anyText = fc.oneof(
  serversDoc,
  validish,
  randomJson,
  mutated,
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '',
    '{',
    '[]',
    'null',
    '{"mcpServers": null}',
    '\uFEFF{}',
    '{"mcpServers": {"keep-u1": 5}}',
  ),
);

function assertSound(r: LoadMcpConfigResult): void {
  expect(r.servers.length).toBeLessThanOrEqual(32);
  const names = new Set<string>();
  for (const s of r.servers) {
    expect(SERVER_NAME_PATTERN.test(s.name)).toBe(true);
    // names are unique after the tool-identity mapping (NAME_CONFLICT skips the later one)
    expect(names.has(serverIdentity(s.name))).toBe(false);
    names.add(serverIdentity(s.name));
    expect(s.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(s.connectable).toBe(
      s.disabled !== true &&
        !s.issues!.some((i) => i.severity === 'error') &&
        ['stdio', 'http', 'sse'].includes(s.transport),
    );
  }
  for (const i of r.issues) {
    expect(['error', 'warning']).toContain(i.severity);
    expect(typeof i.code).toBe('string');
    expect(i.message.length).toBeGreaterThan(0);
  }
}

/** A server from a source other than the fuzzed one is there unchanged, or lost only to a higher source or the limit. */
function expectKept(
  r: LoadMcpConfigResult,
  name: string,
  source: string,
  command: string | undefined,
  fuzzedIsHigher: boolean,
): void {
  const s = r.servers.find((x) => x.name === name);
  if (s && s.source === source) {
    if (command !== undefined) expect(s.config.command).toBe(command);
    expect(s.connectable).toBe(true);
    return;
  }
  // Only a higher-precedence fuzzed file may hide it (same name) or push it past the limit.
  expect(fuzzedIsHigher).toBe(true);
  const limited = r.issues.some((i) => i.code === 'LIMIT_EXCEEDED' && i.server === name);
  expect(Boolean(s) || limited).toBe(true);
}

describe('fuzz: loadMcpConfig never throws and keeps the other sources', () => {
  const dirs = () => {
    const home = tempDir('fz-home-');
    const workdir = tempDir('fz-work-');
    return { home, workdir };
  };
  const plugins = [{ name: 'g', root: '/plugins/g', mcpServers: PLUGIN }];

  it('random and mutated documents as the project file', async () => {
    const { home, workdir } = dirs();
    writeFileSync(join(home, 'mcp.json'), JSON.stringify({ mcpServers: USER }));
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        writeFileSync(join(workdir, '.mcp.json'), text);
        const r = await loadMcpConfig({
          workdir,
          home,
          env: { HOME: '/h' },
          constructorServers: CONSTRUCTOR,
          plugins,
        });
        assertSound(r);
        expectKept(r, 'keep-c1', 'constructor', 'node', false);
        expectKept(r, 'keep-c2', 'constructor', undefined, false);
        expectKept(r, 'keep-u1', 'user', 'u1', true);
        expectKept(r, 'keep-u2', 'user', undefined, true);
        expectKept(r, 'keep-g1', 'plugin', '/plugins/g/g1', true);
      }),
      { numRuns: 1500 },
    );
  }, 300_000); // 1500 loads from disk: slow on a busy machine, so the bound is generous

  it('random and mutated documents as the user file', async () => {
    const { home, workdir } = dirs();
    writeFileSync(join(workdir, '.mcp.json'), JSON.stringify({ mcpServers: PROJECT }));
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        writeFileSync(join(home, 'mcp.json'), text);
        const r = await loadMcpConfig({ workdir, home, env: {}, constructorServers: CONSTRUCTOR, plugins });
        assertSound(r);
        expectKept(r, 'keep-c1', 'constructor', 'node', false);
        expectKept(r, 'keep-p1', 'project', 'p1', false);
        expectKept(r, 'keep-p2', 'project', undefined, false);
        expectKept(r, 'keep-g1', 'plugin', '/plugins/g/g1', true);
      }),
      { numRuns: 1500 },
    );
  }, 300_000); // 1500 loads from disk: slow on a busy machine, so the bound is generous

  it('random constructor and plugin servers (JavaScript values, not files)', async () => {
    const { home, workdir } = dirs();
    writeFileSync(join(workdir, '.mcp.json'), JSON.stringify({ mcpServers: PROJECT }));
    writeFileSync(join(home, 'mcp.json'), JSON.stringify({ mcpServers: USER }));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(name, entry, { maxKeys: 10 }), fc.anything(), async (servers, junk) => {
        const r = await loadMcpConfig({
          workdir,
          home,
          env: {},
          constructorServers: servers,
          plugins: [
            { name: 'junk', root: '/j', mcpServers: junk as Record<string, unknown> },
            { name: 'g', root: '/plugins/g', mcpServers: PLUGIN },
          ],
        });
        assertSound(r);
        expectKept(r, 'keep-p1', 'project', 'p1', true);
        expectKept(r, 'keep-u1', 'user', 'u1', true);
        expectKept(r, 'keep-g1', 'plugin', '/plugins/g/g1', true);
      }),
      { numRuns: 1000 },
    );
  }, 300_000);
});
