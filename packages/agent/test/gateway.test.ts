import { describe, expect, test } from 'vitest';
import { loadCatalog } from '../bench/search-metrics';
import {
  createGateway,
  GATEWAY_SEARCH_MAX_LIMIT,
  type GatewayDeps,
  type GatewayResult,
  type GatewayServerStatus,
  type GatewayTool,
  gatewayDeclaration,
} from '../src/exposure/gateway';

const catalogTools: GatewayTool[] = loadCatalog().map((t) => ({
  ...t,
  fullName: `mcp__${t.server}__${t.name}`,
}));

interface Harness {
  deps: GatewayDeps;
  calls: { fullName: string; args: Record<string, unknown>; signal?: AbortSignal }[];
  setTools(tools: GatewayTool[]): void;
  setStatus(status: GatewayServerStatus[]): void;
}

function harness(
  tools: GatewayTool[] = catalogTools,
  respond: (fullName: string, args: Record<string, unknown>) => Promise<GatewayResult> = async (
    fullName,
    args,
  ) => ({
    content: `${fullName} ran with ${JSON.stringify(args)}`,
  }),
): Harness {
  let live = tools;
  let servers: GatewayServerStatus[] = [];
  const calls: Harness['calls'] = [];
  return {
    calls,
    setTools: (t) => {
      live = t;
    },
    setStatus: (s) => {
      servers = s;
    },
    deps: {
      listTools: () => live,
      status: () => servers,
      call: async (fullName, args, signal) => {
        calls.push({ fullName, args, signal });
        return respond(fullName, args);
      },
    },
  };
}

function textOf(result: GatewayResult): string {
  expect(typeof result.content).toBe('string');
  return result.content as string;
}

const DECLARATION_JSON =
  '{"name":"mcp","description":"Reach the tools of the configured MCP servers. Search first, then call.\\n- search: find tools for a task. `query` is words describing the task, or a tool name. Returns full tool names (mcp__<server>__<tool>) with their parameters, best first (12 by default, `limit` up to 40).\\n- describe: the input schema of one tool. `name` is its full name.\\n- call: run one tool. `name` is its full name; `arguments` is a JSON object string of its arguments.\\n- status: the MCP servers, their connection state, tool counts and errors.","inputSchema":{"type":"object","properties":{"action":{"type":"string","enum":["search","describe","call","status"],"description":"search, describe, call or status."},"query":{"type":"string","description":"search: words describing the task, or a tool name."},"limit":{"type":"integer","minimum":1,"maximum":40,"description":"search: most results (default 12, at most 40)."},"name":{"type":"string","description":"describe, call: the full tool name, mcp__<server>__<tool>."},"arguments":{"type":"string","description":"call: the tool arguments as a JSON object, e.g. {\\"path\\": \\"README.md\\"}."}},"required":["action"],"additionalProperties":false}}';

describe('gatewayDeclaration', () => {
  test('is byte-identical to the golden text, and stays so before and after a server connects', async () => {
    expect(JSON.stringify(gatewayDeclaration)).toBe(DECLARATION_JSON);
    const h = harness([]);
    const gateway = createGateway(h.deps);
    await gateway.run({ action: 'search', query: 'issue' });
    expect(JSON.stringify(gatewayDeclaration)).toBe(DECLARATION_JSON);
    h.setTools(catalogTools); // a server connected
    await gateway.run({ action: 'search', query: 'issue' });
    await gateway.run({ action: 'status' });
    expect(JSON.stringify(gatewayDeclaration)).toBe(DECLARATION_JSON);
  });

  test('cannot be changed at runtime', () => {
    expect(Object.isFrozen(gatewayDeclaration)).toBe(true);
    expect(Object.isFrozen(gatewayDeclaration.inputSchema)).toBe(true);
    expect(Object.isFrozen((gatewayDeclaration.inputSchema as { properties: object }).properties)).toBe(true);
    expect(() => {
      (gatewayDeclaration as { description: string }).description = 'x';
    }).toThrow(TypeError);
  });
});

describe('search', () => {
  test('an exact full name is always the first result, for every tool of the catalog', async () => {
    const gateway = createGateway(harness().deps);
    for (const tool of catalogTools) {
      const first = textOf(await gateway.run({ action: 'search', query: tool.fullName })).split('\n')[0];
      expect(first?.startsWith(`${tool.fullName}(`)).toBe(true);
    }
  });

  test('lists full names with parameters and a one-line description, 12 by default', async () => {
    const gateway = createGateway(harness().deps);
    const out = textOf(await gateway.run({ action: 'search', query: 'create a pull request on github' }));
    const lines = out.split('\n');
    expect(lines[0]).toBe(
      'mcp__github__create_pull_request(owner, repo, title, body?, head, base, draft?, maintainer_can_modify?) - Create a new pull request in a GitHub repository',
    );
    expect(lines.filter((l) => l.startsWith('mcp__'))).toHaveLength(12);
    expect(out).toContain('Use action "describe"');
  });

  test('limit is honoured up to 40, and larger limits are lowered to 40', async () => {
    const gateway = createGateway(harness().deps);
    const count = async (limit: unknown): Promise<number> =>
      textOf(await gateway.run({ action: 'search', query: 'list', limit }))
        .split('\n')
        .filter((l) => l.startsWith('mcp__')).length;
    expect(await count(3)).toBe(3);
    expect(await count('5')).toBe(5);
    expect(await count(1000)).toBe(GATEWAY_SEARCH_MAX_LIMIT);
    const bad = await gateway.run({ action: 'search', query: 'list', limit: 0 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('`limit` must be a number from 1 to 40');
  });

  test('sees tools that appear later (a server connects) and says when nothing matches', async () => {
    const h = harness([]);
    const gateway = createGateway(h.deps);
    expect(textOf(await gateway.run({ action: 'search', query: 'refund' }))).toContain(
      'No MCP tools are available',
    );
    h.setTools(catalogTools);
    expect(textOf(await gateway.run({ action: 'search', query: 'refund a payment' })).split('\n')[0]).toMatch(
      /^mcp__stripe__create_refund\(/,
    );
    const none = await gateway.run({ action: 'search', query: 'zzqxv' });
    expect(none.isError).toBeUndefined();
    expect(textOf(none)).toContain('No tool matched "zzqxv"');
  });

  test('needs a query', async () => {
    const gateway = createGateway(harness().deps);
    const out = await gateway.run({ action: 'search' });
    expect(out).toEqual({
      content: 'search needs `query`: words describing the task, or a tool name.',
      isError: true,
    });
  });
});

describe('describe', () => {
  test('gives the description and the input schema of a full name', async () => {
    const gateway = createGateway(harness().deps);
    const out = textOf(await gateway.run({ action: 'describe', name: 'mcp__redis__set' }));
    const redisSet = catalogTools.find((t) => t.fullName === 'mcp__redis__set') as GatewayTool;
    expect(out).toBe(
      `mcp__redis__set (server redis)\n\n${redisSet.description}\n\nInput schema:\n${JSON.stringify(redisSet.inputSchema, null, 2)}`,
    );
  });

  test('accepts server__tool and a bare name that only one server has; refuses an ambiguous one', async () => {
    const gateway = createGateway(harness().deps);
    expect(textOf(await gateway.run({ action: 'describe', name: 'redis__set' }))).toMatch(
      /^mcp__redis__set /,
    );
    expect(textOf(await gateway.run({ action: 'describe', name: 'create_refund' }))).toMatch(
      /^mcp__stripe__create_refund /,
    );
    const ambiguous = await gateway.run({ action: 'describe', name: 'create_branch' });
    expect(ambiguous.isError).toBe(true);
    expect(textOf(ambiguous)).toBe(
      'Tool name "create_branch" is on several servers: mcp__github__create_branch, mcp__gitlab__create_branch, mcp__supabase__create_branch. Give the full name.',
    );
  });

  test('an unknown name suggests the closest tools', async () => {
    const gateway = createGateway(harness().deps);
    const out = await gateway.run({ action: 'describe', name: 'mcp__github__create_pr' });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(
      /^Unknown tool "mcp__github__create_pr"\. Did you mean: mcp__github__create_pull_request, /,
    );
  });
});

describe('call', () => {
  test('arguments as a JSON string', async () => {
    const h = harness();
    const gateway = createGateway(h.deps);
    const out = await gateway.run({ action: 'call', name: 'mcp__redis__get', arguments: '{"key":"a"}' });
    expect(out).toEqual({ content: 'mcp__redis__get ran with {"key":"a"}' });
    expect(h.calls.map((c) => [c.fullName, c.args])).toEqual([['mcp__redis__get', { key: 'a' }]]);
  });

  test('arguments as an object, or absent', async () => {
    const h = harness();
    const gateway = createGateway(h.deps);
    await gateway.run({ action: 'call', name: 'mcp__memory__read_graph' });
    await gateway.run({ action: 'call', name: 'mcp__redis__set', arguments: { key: 'a', value: 'b' } });
    expect(h.calls.map((c) => [c.fullName, c.args])).toEqual([
      ['mcp__memory__read_graph', {}],
      ['mcp__redis__set', { key: 'a', value: 'b' }],
    ]);
  });

  test('passes the signal and returns the tool result as it is', async () => {
    const image = { type: 'image' as const, mimeType: 'image/png', data: 'AAAA' };
    const h = harness(catalogTools, async () => ({ content: [image], isError: true }));
    const gateway = createGateway(h.deps);
    const controller = new AbortController();
    const out = await gateway.run(
      { action: 'call', name: 'mcp__everything__get-tiny-image', arguments: '{}' },
      { signal: controller.signal },
    );
    expect(out).toEqual({ content: [image], isError: true });
    expect(h.calls[0]?.signal).toBe(controller.signal);
  });

  test.each([
    [{ arguments: '{"key": ' }, /^`arguments` is not valid JSON \(.+\)\. Pass a JSON object/],
    [{ arguments: '[1,2]' }, /^`arguments` must be a JSON object/],
    [{ arguments: '"text"' }, /^`arguments` must be a JSON object/],
    [{ arguments: 42 }, /^`arguments` must be a JSON object \(or a string holding one\)/],
    [{ arguments: ['a'] }, /^`arguments` must be a JSON object \(or a string holding one\)/],
  ])('bad arguments %j are refused before any call', async (extra, message) => {
    const h = harness();
    const out = await createGateway(h.deps).run({ action: 'call', name: 'mcp__redis__get', ...extra });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(message);
    expect(h.calls).toEqual([]);
  });

  test('an unknown tool is refused with suggestions, and nothing is called', async () => {
    const h = harness();
    const out = await createGateway(h.deps).run({
      action: 'call',
      name: 'slack_send_message',
      arguments: '{}',
    });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(
      /^Unknown tool "slack_send_message"\. Did you mean: mcp__slack__slack_post_message/,
    );
    expect(h.calls).toEqual([]);
  });

  test('a call that throws becomes an error result; an aborted one rethrows', async () => {
    const h = harness(catalogTools, async () => {
      throw new Error('connection lost');
    });
    const gateway = createGateway(h.deps);
    expect(await gateway.run({ action: 'call', name: 'mcp__redis__get', arguments: '{}' })).toEqual({
      content: 'Tool mcp__redis__get failed: connection lost',
      isError: true,
    });
    const controller = new AbortController();
    controller.abort();
    await expect(
      gateway.run(
        { action: 'call', name: 'mcp__redis__get', arguments: '{}' },
        { signal: controller.signal },
      ),
    ).rejects.toThrow('connection lost');
  });
});

describe('status', () => {
  test('lists servers, states, tool counts and errors', async () => {
    const h = harness();
    const gateway = createGateway(h.deps);
    expect(await gateway.run({ action: 'status' })).toEqual({ content: 'No MCP servers are configured.' });
    h.setStatus([
      { name: 'github', status: 'connected', toolCount: 26 },
      { name: 'redis', status: 'error', toolCount: 0, error: 'spawn redis-mcp ENOENT' },
      { name: 'postgres', status: 'connected', toolCount: 1 },
    ]);
    expect(await gateway.run({ action: 'status' })).toEqual({
      content:
        'github: connected, 26 tools\nredis: error, 0 tools - error: spawn redis-mcp ENOENT\npostgres: connected, 1 tool',
    });
  });
});

describe('approval and bad input', () => {
  test('only call needs approval', () => {
    const gateway = createGateway(harness().deps);
    expect(gateway.needsApproval({ action: 'call', name: 'mcp__redis__get' })).toBe(true);
    for (const args of [
      { action: 'search' },
      { action: 'describe' },
      { action: 'status' },
      { action: 'x' },
      null,
      'call',
    ]) {
      expect(gateway.needsApproval(args)).toBe(false);
    }
  });

  test.each([
    [null, 'The mcp tool takes an object: {"action": "search", "query": "..."}.'],
    ['search', 'The mcp tool takes an object: {"action": "search", "query": "..."}.'],
    [{}, 'Missing `action`: use one of search, describe, call, status.'],
    [{ action: 'invoke' }, 'Unknown action "invoke": use one of search, describe, call, status.'],
    [{ action: 'describe' }, 'describe needs `name`: the full tool name.'],
    [{ action: 'call', arguments: '{}' }, 'call needs `name`: the full tool name.'],
  ])('%j -> clear error', async (args, message) => {
    expect(await createGateway(harness().deps).run(args)).toEqual({ content: message, isError: true });
  });
});
