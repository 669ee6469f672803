import { type FakeModelServer, startFakeAnthropic, waitFor } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message, ModelStreamEvent, ToolDeclaration } from '../../src/model';
import {
  type AnthropicOptions,
  anthropic,
  toAnthropicMessages,
  toMessagesBody,
} from '../../src/models/anthropic';
import { isModelError, type ModelError } from '../../src/models/errors';

const servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(options: Parameters<typeof startFakeAnthropic>[0] = {}): Promise<FakeModelServer> {
  const s = await startFakeAnthropic(options);
  servers.push(s);
  return s;
}

function recordingSleep() {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms: number) => {
      delays.push(ms);
    },
  };
}

const KEY = 'sk-ant-test-0123456789';

function adapter(s: FakeModelServer, options: Partial<AnthropicOptions> = {}) {
  const { sleep } = recordingSleep();
  return anthropic({ apiKey: KEY, model: 'claude-test', baseURL: s.baseURL, retry: { sleep }, ...options });
}

async function failure(p: Promise<unknown>): Promise<ModelError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isModelError(error)) throw new Error(`expected a ModelError, got ${String(error)}`);
  return error;
}

const TOOLS: ToolDeclaration[] = [
  { name: 'a_tool', description: 'A', inputSchema: { type: 'object' } },
  {
    name: 'b_tool',
    description: 'B',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  },
];
const HELLO: Message[] = [{ role: 'user', content: 'hello' }];

describe('anthropic: streaming', () => {
  it('streams text, sends headers, cache breakpoints on system, last tool and newest message', async () => {
    const s = await serve({
      steps: [
        {
          text: 'Hi there!',
          chunkSize: 4,
          usage: { inputTokens: 20, outputTokens: 9, cacheReadTokens: 1000, cacheWriteTokens: 50 },
        },
      ],
    });
    const events: ModelStreamEvent[] = [];
    const model = adapter(s);
    const result = await model.generate({
      system: 'Be brief.',
      tools: TOOLS,
      messages: HELLO,
      onEvent: (e) => events.push(e),
    });
    expect(result).toEqual({
      content: 'Hi there!',
      toolCalls: [],
      usage: { inputTokens: 1070, outputTokens: 9, cacheReadTokens: 1000, cacheWriteTokens: 50 },
      stopReason: 'end',
    });
    expect(events).toEqual(['Hi t', 'here', '!'].map((text) => ({ type: 'text-delta', text })));
    const req = s.requests[0]!;
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(KEY);
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body).toEqual({
      model: 'claude-test',
      max_tokens: 8192,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] },
      ],
      tools: [
        { name: 'a_tool', description: 'A', input_schema: { type: 'object' } },
        {
          name: 'b_tool',
          description: 'B',
          input_schema: TOOLS[1]!.inputSchema,
          cache_control: { type: 'ephemeral' },
        },
      ],
      stream: true,
    });
    expect(model.name).toBe('anthropic:claude-test');
    expect(model.supportsVision).toBe(true);
  });

  it('assembles tool_use blocks from input_json_delta fragments and emits each when its block stops', async () => {
    const s = await serve({
      steps: [
        {
          text: 'Checking.',
          chunkSize: 3,
          toolCalls: [
            { id: 'toolu_1', name: 'a_tool', arguments: { path: '/etc/hosts', deep: { n: [1, 2] } } },
            { id: 'toolu_2', name: 'b_tool', arguments: {} },
          ],
        },
      ],
    });
    const events: ModelStreamEvent[] = [];
    const result = await adapter(s).generate({
      system: '',
      tools: TOOLS,
      messages: HELLO,
      onEvent: (e) => events.push(e),
    });
    expect(result.stopReason).toBe('tool_calls');
    expect(result.content).toBe('Checking.');
    expect(result.toolCalls).toEqual([
      { id: 'toolu_1', name: 'a_tool', arguments: { path: '/etc/hosts', deep: { n: [1, 2] } } },
      { id: 'toolu_2', name: 'b_tool', arguments: {} },
    ]);
    expect(events.filter((e) => e.type === 'tool-call')).toHaveLength(2);
    expect(s.requests[0]!.body.system).toBeUndefined();
  });

  it('maps stop_reason max_tokens and honours maxTokens and cache: false', async () => {
    const s = await serve({ steps: [{ text: 'cut', stopReason: 'max_tokens' }] });
    const result = await adapter(s, { maxTokens: 100, cache: false }).generate({
      system: 'S',
      tools: TOOLS,
      messages: HELLO,
    });
    expect(result.stopReason).toBe('max_tokens');
    const body = s.requests[0]!.body;
    expect(body.max_tokens).toBe(100);
    expect(body.system).toBe('S');
    expect(JSON.stringify(body)).not.toContain('cache_control');
  });

  it('reads a plain JSON Messages response when stream is off', async () => {
    const s = await serve({
      steps: [{ text: 'whole', toolCalls: [{ id: 't1', name: 'a_tool', arguments: { x: 1 } }] }],
    });
    const result = await adapter(s, { stream: false }).generate({
      system: '',
      tools: TOOLS,
      messages: HELLO,
    });
    expect(result).toMatchObject({
      content: 'whole',
      toolCalls: [{ id: 't1', name: 'a_tool', arguments: { x: 1 } }],
      stopReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 5 },
    });
    expect(s.requests[0]!.body.stream).toBeUndefined();
  });
});

describe('anthropic: errors and retries', () => {
  it('retries 429 (retry-after) and 529 overloaded, then succeeds', async () => {
    const s = await serve({
      steps: [{ status: 429, headers: { 'retry-after': '1' } }, { status: 529 }, { text: 'ok' }],
    });
    const { delays, sleep } = recordingSleep();
    const model = adapter(s, { retry: { sleep, random: () => 0 } });
    expect((await model.generate({ system: '', tools: [], messages: HELLO })).content).toBe('ok');
    expect(delays).toEqual([1000, 500]);
    expect(s.requests).toHaveLength(3);
  });

  it('401 is MODEL_AUTH with the provider text and no key; prompt too long is MODEL_CONTEXT_LENGTH', async () => {
    const s = await serve({
      steps: [
        { status: 401, message: `invalid x-api-key ${KEY}` },
        { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' },
      ],
    });
    const auth = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(auth.code).toBe('MODEL_AUTH');
    expect(auth.message).toContain('invalid x-api-key');
    expect(auth.message).toContain('ANTHROPIC_API_KEY');
    expect(auth.message).not.toContain(KEY);
    const long = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(long.code).toBe('MODEL_CONTEXT_LENGTH');
    expect(s.requests).toHaveLength(2);
  });

  it('an error event mid-stream is MODEL_STREAM and is not retried', async () => {
    const s = await serve({
      steps: [
        { text: 'abcdefgh', streamError: { afterChunks: 4, message: 'Overloaded' } },
        { text: 'never' },
      ],
    });
    const error = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_STREAM');
    expect(error.message).toContain('overloaded_error: Overloaded');
    expect(s.requests).toHaveLength(1);
  });

  it('a stream that ends before message_stop is MODEL_NETWORK', async () => {
    const s = await serve({ steps: [{ text: 'abcdefgh', dropAfterChunks: 4 }] });
    const error = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_NETWORK');
    expect(s.requests).toHaveLength(1);
  });

  it('abort mid-stream rejects with MODEL_ABORTED and the server sees the request closed', async () => {
    const s = await serve({ steps: [{ text: 'streaming forever', hangAfterChunks: 4 }] });
    const controller = new AbortController();
    const pending = adapter(s).generate({
      system: '',
      tools: [],
      messages: HELLO,
      signal: controller.signal,
      onEvent: () => controller.abort(),
    });
    expect((await failure(pending)).code).toBe('MODEL_ABORTED');
    await waitFor(() => s.requests[0]?.closedEarly, { timeoutMs: 30_000, message: 'server sees the abort' });
  });
});

describe('toAnthropicMessages', () => {
  const PNG = { type: 'image' as const, mimeType: 'image/png', data: 'iVBORw0KGgo=' };

  it('tool results become user tool_result blocks, merged with a following user message, results first', () => {
    const history: Message[] = [
      { role: 'user', content: 'look' },
      { role: 'user', content: '[instructions delta]', isMeta: true },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 't1', name: 'shot', arguments: { w: 1 } },
          { id: 't2', name: 'fail', arguments: {} },
        ],
      },
      { role: 'tool', toolCallId: 't1', name: 'shot', content: [{ type: 'text', text: 'here' }, PNG] },
      { role: 'tool', toolCallId: 't2', name: 'fail', content: 'denied', isError: true },
      { role: 'user', content: 'and now?' },
      { role: 'assistant', content: '' },
    ];
    expect(toAnthropicMessages(history, true)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'text', text: '[instructions delta]' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'shot', input: { w: 1 } },
          { type: 'tool_use', id: 't2', name: 'fail', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [
              { type: 'text', text: 'here' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            ],
          },
          {
            type: 'tool_result',
            tool_use_id: 't2',
            content: [{ type: 'text', text: 'denied' }],
            is_error: true,
          },
          { type: 'text', text: 'and now?' },
        ],
      },
    ]);
  });

  it('puts tool_result blocks first even when a user message came before them', () => {
    const out = toAnthropicMessages(
      [
        { role: 'assistant', content: 'x', toolCalls: [{ id: 't', name: 'n', arguments: {} }] },
        { role: 'user', content: 'note first' },
        { role: 'tool', toolCallId: 't', name: 'n', content: '' },
      ],
      true,
    );
    expect(out[1]!.content.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(out[1]!.content[0]).toEqual({ type: 'tool_result', tool_use_id: 't' });
  });

  it('without vision, images become a text note', () => {
    const out = toAnthropicMessages([{ role: 'user', content: [PNG] }], false);
    expect(out[0]!.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('image/png') });
  });

  it('the newest message breakpoint lands on its last block (a tool_result) and inputs are not mutated', () => {
    const messages: Message[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', toolCalls: [{ id: 't', name: 'n', arguments: {} }] },
      { role: 'tool', toolCallId: 't', name: 'n', content: 'r' },
    ];
    const before = JSON.stringify(messages);
    const body = toMessagesBody({ system: '', tools: [], messages }, { apiKey: 'k', model: 'm' });
    const wire = body.messages as { content: Record<string, unknown>[] }[];
    expect(wire.at(-1)!.content.at(-1)).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
    expect(wire[0]!.content[0]!.cache_control).toBeUndefined();
    expect(JSON.stringify(messages)).toBe(before);
  });
});

describe('anthropic: options', () => {
  it('throws MODEL_CONFIG at once for an empty key, a missing model, or a bad baseURL', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return isModelError(error) ? error.code : String(error);
      }
      return 'no error';
    };
    expect(code(() => anthropic({ apiKey: '', model: 'm' }))).toBe('MODEL_CONFIG');
    expect(code(() => anthropic({ apiKey: 'k', model: '' }))).toBe('MODEL_CONFIG');
    expect(code(() => anthropic({ apiKey: 'k', model: 'm', baseURL: 'api.anthropic.com' }))).toBe(
      'MODEL_CONFIG',
    );
    expect(code(() => anthropic({ apiKey: 'k', model: 'm' }))).toBe('no error');
  });
});
