import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { bigText, HELLO_INSTRUCTIONS_END, LONG_INSTRUCTIONS_END } from '../fixtures/lib/hello-tools.mjs';
import { fixtureServer } from '../src/fixtures';
import { deferred } from '../src/wait';
import { connectStdio, textOf, useCleanup } from './support';

const HELLO_TOOLS = ['add', 'add_tool', 'big', 'echo', 'fail', 'image', 'remove_tool', 'sleep'];

describe('hello fixture (stdio)', () => {
  const cleanup = useCleanup();

  it('serves the hello tools and multi-line instructions', async () => {
    const { client } = await connectStdio(cleanup, fixtureServer('hello'));
    expect(client.getServerVersion()?.name).toBe('hello');
    const instructions = client.getInstructions() ?? '';
    expect(instructions.split('\n').length).toBeGreaterThanOrEqual(3);
    expect(instructions.endsWith(HELLO_INSTRUCTIONS_END)).toBe(true);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(HELLO_TOOLS);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
  });

  it('calls echo, add, sleep, fail, big and image', async () => {
    const { client } = await connectStdio(cleanup, fixtureServer('hello'));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'a\nb' } }))).toBe('a\nb');
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }))).toBe('42');
    expect(textOf(await client.callTool({ name: 'sleep', arguments: { ms: 20 } }))).toBe('slept 20 ms');

    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toContain('fail');

    const big = textOf(await client.callTool({ name: 'big', arguments: { bytes: 100_000 } }));
    expect(big.length).toBe(100_000);
    expect(big).toBe(bigText(100_000));
    expect(big.split('\n').length).toBe(1001);

    const image = await client.callTool({ name: 'image', arguments: { count: 2 } });
    const blocks = image.content as { type: string; data: string; mimeType: string }[];
    expect(blocks).toHaveLength(2);
    expect(blocks[0]?.type).toBe('image');
    expect(blocks[0]?.mimeType).toBe('image/png');
    expect(
      Buffer.from(blocks[0]?.data ?? '', 'base64')
        .subarray(1, 4)
        .toString('ascii'),
    ).toBe('PNG');
  });

  it('cancelling sleep rejects the call on the client', async () => {
    const { client } = await connectStdio(cleanup, fixtureServer('hello'));
    const abort = new AbortController();
    const call = client.callTool({ name: 'sleep', arguments: { ms: 60_000 } }, undefined, {
      signal: abort.signal,
    });
    abort.abort(new Error('stop'));
    await expect(call).rejects.toThrow();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still alive' } }))).toBe(
      'still alive',
    );
  });

  it.each([
    ['none', (i: string | undefined) => expect(i).toBeUndefined()],
    [
      'long',
      (i: string | undefined) => {
        expect(i?.length).toBeGreaterThan(2048);
        expect(i?.indexOf(LONG_INSTRUCTIONS_END)).toBeGreaterThan(2048);
        expect(i?.split('\n').length).toBeGreaterThan(10);
      },
    ],
    ['custom text\nsecond line', (i: string | undefined) => expect(i).toBe('custom text\nsecond line')],
  ])('HELLO_INSTRUCTIONS=%j', async (mode, check) => {
    const { client } = await connectStdio(cleanup, fixtureServer('hello', { HELLO_INSTRUCTIONS: mode }));
    check(client.getInstructions());
  });

  it('HELLO_EXTRA_TOOLS and HELLO_NAME', async () => {
    const { client } = await connectStdio(
      cleanup,
      fixtureServer('hello', { HELLO_EXTRA_TOOLS: '3', HELLO_NAME: 'second' }),
    );
    expect(client.getServerVersion()?.name).toBe('second');
    expect(client.getInstructions()).toContain('"second"');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['extra_0', 'extra_1', 'extra_2']));
    expect(names).not.toContain('extra_3');
    expect(textOf(await client.callTool({ name: 'extra_2', arguments: { value: 'v' } }))).toBe('extra_2: v');
  });

  it('add_tool and remove_tool send tools/list_changed', async () => {
    const client = new Client({ name: 'testkit-test', version: '0.0.0' });
    let changes = 0;
    let changed = deferred<void>();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
      changed.resolve();
    });
    await connectStdio(cleanup, fixtureServer('hello'), { client });

    expect(textOf(await client.callTool({ name: 'add_tool', arguments: { name: 'late' } }))).toBe(
      'added late',
    );
    await changed.promise;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('late');
    expect(textOf(await client.callTool({ name: 'late', arguments: { value: 'x' } }))).toBe('late: x');

    const duplicate = await client.callTool({ name: 'add_tool', arguments: { name: 'echo' } });
    expect(duplicate.isError).toBe(true);

    changed = deferred<void>();
    const before = changes;
    expect(textOf(await client.callTool({ name: 'remove_tool', arguments: { name: 'late' } }))).toBe(
      'removed late',
    );
    await changed.promise;
    expect(changes).toBeGreaterThan(before);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('late');
  });
});

describe('bigText', () => {
  it.each([0, 1, 99, 100, 101, 12_345])('has exactly %i characters', (n) => {
    expect(bigText(n)).toHaveLength(n);
  });
});
