import type { McpServerView } from '@wave/agent';
import { describe, expect, it } from 'vitest';
import {
  collapse,
  contentText,
  formatArgs,
  renderServers,
  renderTools,
  statusLabel,
} from '../src/chat/format';

function view(over: Partial<McpServerView>): McpServerView {
  return {
    name: 's',
    source: 'user',
    status: 'disconnected',
    toolCount: 0,
    tools: [],
    fromCache: false,
    manuallyDisconnected: false,
    config: {} as McpServerView['config'],
    ...over,
  };
}

describe('chat formatting', () => {
  it.each([
    ['short', 'a\nb', 4, { lines: ['a', 'b'], hiddenLines: 0 }],
    ['long', 'a\nb\nc\nd\ne\nf\n', 4, { lines: ['a', 'b', 'c', 'd'], hiddenLines: 2 }],
    ['trailing blank lines', 'a\n\n\n', 4, { lines: ['a'], hiddenLines: 0 }],
  ])('collapse: %s', (_n, text, max, want) => {
    expect(collapse(text, max)).toEqual(want);
  });

  it('collapse cuts wide lines; formatArgs cuts long arguments', () => {
    expect(collapse('x'.repeat(200), 4, 10).lines).toEqual([`${'x'.repeat(9)}…`]);
    expect(formatArgs({ a: 1 })).toBe('{"a":1}');
    expect(formatArgs({ text: 'y'.repeat(300) }, 20)).toHaveLength(20);
  });

  it('contentText joins text blocks and names images', () => {
    expect(
      contentText([
        { type: 'text', text: 'one' },
        { type: 'image', mimeType: 'image/png', data: '' },
      ]),
    ).toBe('one\n[image image/png]');
  });

  it('statusLabel says why a server is off and what to do', () => {
    const off = new Map([
      ['d', 'disabled'],
      ['t', 'not trusted'],
    ]);
    expect(statusLabel(view({ name: 'd', status: 'disabled' }), off)).toBe('disabled (wave mcp enable d)');
    expect(statusLabel(view({ name: 't', status: 'disabled' }), off)).toMatch(/not trusted/);
    expect(statusLabel(view({ manuallyDisconnected: true }), off)).toBe('disconnected (by you)');
    expect(statusLabel(view({}), off)).toMatch(/dialed on the next message/);
    expect(statusLabel(view({ status: 'error' }), off)).toBe('error');
  });

  it('renderServers shows tools (cached marked) and the first line of an error; renderTools lists full names', () => {
    const views = [
      view({
        name: 'a',
        status: 'connected',
        toolCount: 1,
        tools: [{ name: 'echo', description: 'Echo\nmore' }],
      }),
      view({ name: 'b', toolCount: 2, fromCache: true, tools: [{ name: 'x' }, { name: 'y' }] }),
      view({ name: 'c', status: 'error', error: { code: 'E', message: 'spawn nope ENOENT\nstack' } }),
    ];
    expect(renderServers(views, new Map())).toEqual([
      'a (user): connected, 1 tool',
      'b (user): not connected yet (dialed on the next message), 2 tools (cached)',
      'c (user): error',
      '    spawn nope ENOENT',
    ]);
    expect(renderTools(views)).toEqual([
      'a',
      '  mcp__a__echo  Echo',
      'b (cached; not connected)',
      '  mcp__b__x',
      '  mcp__b__y',
    ]);
    expect(renderServers([], new Map())[0]).toBe('No MCP servers are configured.');
  });
});
