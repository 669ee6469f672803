import { describe, expect, it, onTestFinished } from 'vitest';
import { execExposure } from '../../src/exposure/exec-exposure';
import type { LiveTool } from '../../src/exposure/types';

const tool = (server: string, name: string): LiveTool => ({
  server,
  name,
  fullName: `mcp__${server}__${name}`,
  description: `${name} of ${server}`,
  inputSchema: { type: 'object', properties: {} },
});

describe('Exec: the callable set comes from the live pool when the script runs', () => {
  it('a server that connected after the tools were declared is callable and searchable; one that left is not', async () => {
    const exposure = execExposure();
    onTestFinished(() => exposure.close());
    let live: LiveTool[] = [tool('old', 'ping')];
    const plan = exposure.plan({ tools: live, currentTools: () => live, builtins: [], servers: [] });
    // Between the plan and the script: "old" dropped, "late" connected.
    live = [tool('late', 'greet')];
    const calls: string[] = [];
    const route = plan.route({
      id: 'c1',
      name: 'Exec',
      arguments: {
        code: `
          const hits = await tools["$codemode"].search("greet");
          let oldCall;
          try { await tools.mcp__old__ping({}); oldCall = "called"; } catch (e) { oldCall = "refused"; }
          const r = await tools.mcp__late__greet({});
          return JSON.stringify({ hits: hits.map((h) => h.fullName ?? h.name), oldCall, r });
        `,
      },
    });
    if (route.kind !== 'custom') throw new Error('Exec must be a custom route');
    const out = await route.run({
      callTool: async (fullName) => {
        calls.push(fullName);
        return { content: `hello from ${fullName}`, isError: false };
      },
    });
    expect(out.isError).toBe(false);
    const text = typeof out.content === 'string' ? out.content : JSON.stringify(out.content);
    expect(calls).toEqual(['mcp__late__greet']);
    expect(text).toContain('mcp__late__greet');
    expect(text).toContain('refused');
  });
});
