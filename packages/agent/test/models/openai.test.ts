import { type FakeModelServer, startFakeOpenAI, waitFor } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message, ModelStreamEvent, ToolDeclaration } from '../../src/model';
import { isModelError, type ModelError } from '../../src/models/errors';
import {
  createChatStreamState,
  type OpenAICompatibleOptions,
  openaiCompatible,
  toChatCompletionsBody,
  toChatMessages,
} from '../../src/models/openai';

const servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(steps: Parameters<typeof startFakeOpenAI>[0] = {}): Promise<FakeModelServer> {
  const s = await startFakeOpenAI(steps);
  servers.push(s);
  return s;
}

/** Backoff delays the adapter asked for; never sleeps. */
function recordingSleep() {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms: number, signal?: AbortSignal) => {
      delays.push(ms);
      if (signal?.aborted) throw signal.reason;
    },
  };
}

function adapter(s: FakeModelServer, options: Partial<OpenAICompatibleOptions> = {}) {
  const { sleep } = recordingSleep();
  return openaiCompatible({ baseURL: s.baseURL, model: 'test-model', retry: { sleep }, ...options });
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
  { name: 'mcp__files__read', description: 'Read a file', inputSchema: { type: 'object', properties: {} } },
];
const HELLO: Message[] = [{ role: 'user', content: 'hello' }];

describe('openaiCompatible: streaming', () => {
  it('streams text deltas, reports usage with cached tokens, sends the Chat Completions body', async () => {
    const s = await serve({
      steps: [
        {
          text: 'Hello there',
          chunkSize: 3,
          usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 64 },
        },
      ],
    });
    const events: ModelStreamEvent[] = [];
    const model = adapter(s, { apiKey: 'sk-test-123' });
    const result = await model.generate({
      system: 'You are terse.',
      tools: TOOLS,
      messages: HELLO,
      onEvent: (e) => events.push(e),
    });
    expect(result).toEqual({
      content: 'Hello there',
      toolCalls: [],
      usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 64 },
      stopReason: 'end',
    });
    expect(events).toEqual(['Hel', 'lo ', 'the', 're'].map((text) => ({ type: 'text-delta', text })));
    const req = s.requests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-test-123');
    expect(req.body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hello' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'mcp__files__read',
            description: 'Read a file',
            parameters: TOOLS[0]!.inputSchema,
          },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(model.name).toBe('openai-compatible:test-model');
    expect(model.supportsVision).toBe(false);
  });

  it('assembles tool calls from streamed argument fragments, in order', async () => {
    const s = await serve({
      steps: [
        {
          text: 'Let me look.',
          chunkSize: 2,
          toolCalls: [
            { id: 'call_a', name: 'mcp__files__read', arguments: { path: '/tmp/a.txt', lines: [1, 2] } },
            { id: 'call_b', name: 'mcp__files__read', arguments: { path: '/tmp/b.txt' } },
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
    expect(result.content).toBe('Let me look.');
    expect(result.toolCalls).toEqual([
      { id: 'call_a', name: 'mcp__files__read', arguments: { path: '/tmp/a.txt', lines: [1, 2] } },
      { id: 'call_b', name: 'mcp__files__read', arguments: { path: '/tmp/b.txt' } },
    ]);
    expect(
      events.filter((e) => e.type === 'tool-call').map((e) => e.type === 'tool-call' && e.call.id),
    ).toEqual(['call_a', 'call_b']);
    // No system message when the system prompt is empty.
    expect(s.requests[0]!.body.messages[0].role).toBe('user');
  });

  it('keeps unparseable arguments as invalidArguments instead of failing the turn', async () => {
    const s = await serve({ steps: [{ toolCalls: [{ id: 'c1', name: 't', arguments: '{"path": "/x"' }] }] });
    const result = await adapter(s).generate({ system: '', tools: TOOLS, messages: HELLO });
    expect(result.toolCalls).toEqual([
      { id: 'c1', name: 't', arguments: {}, invalidArguments: '{"path": "/x"' },
    ]);
  });

  it('maps finish_reason length to max_tokens', async () => {
    const s = await serve({ steps: [{ text: 'cut', stopReason: 'length' }] });
    expect((await adapter(s).generate({ system: '', tools: [], messages: HELLO })).stopReason).toBe(
      'max_tokens',
    );
    expect(s.requests[0]!.body.tools).toBeUndefined();
  });

  it('reads a plain JSON completion when stream is off', async () => {
    const s = await serve({
      steps: [{ text: 'whole', toolCalls: [{ id: 'c', name: 't', arguments: { a: 1 } }] }],
    });
    const events: ModelStreamEvent[] = [];
    const result = await adapter(s, { stream: false }).generate({
      system: '',
      tools: TOOLS,
      messages: HELLO,
      onEvent: (e) => events.push(e),
    });
    expect(result).toMatchObject({
      content: 'whole',
      toolCalls: [{ id: 'c', name: 't', arguments: { a: 1 } }],
    });
    expect(s.requests[0]!.body.stream).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['text-delta', 'tool-call']);
  });
});

describe('openaiCompatible: retries', () => {
  it('retries a 429 after the retry-after it was given, then succeeds', async () => {
    const s = await serve({ steps: [{ status: 429, headers: { 'retry-after': '2' } }, { text: 'ok' }] });
    const { delays, sleep } = recordingSleep();
    const result = await adapter(s, { retry: { sleep } }).generate({
      system: '',
      tools: [],
      messages: HELLO,
    });
    expect(result.content).toBe('ok');
    expect(delays).toEqual([2000]);
    expect(s.requests).toHaveLength(2);
  });

  it('backs off exponentially with jitter on 5xx', async () => {
    const s = await serve({ steps: [{ status: 500 }, { status: 503 }, { status: 502 }, { text: 'ok' }] });
    const { delays, sleep } = recordingSleep();
    const model = adapter(s, { retry: { sleep, baseDelayMs: 100, random: () => 0.5 } });
    expect((await model.generate({ system: '', tools: [], messages: HELLO })).content).toBe('ok');
    expect(delays).toEqual([75, 150, 300]);
  });

  it('stops after maxRetries with MODEL_RATE_LIMIT', async () => {
    const s = await serve({ fallback: { status: 429, message: 'slow down' } });
    const { delays, sleep } = recordingSleep();
    const error = await failure(
      adapter(s, { retry: { sleep, maxRetries: 2 } }).generate({ system: '', tools: [], messages: HELLO }),
    );
    expect(error.code).toBe('MODEL_RATE_LIMIT');
    expect(error.attempts).toBe(3);
    expect(error.status).toBe(429);
    expect(error.message).toContain('slow down');
    expect(delays).toHaveLength(2);
  });

  it('fails at once when retry-after asks for more than maxRetryAfterMs', async () => {
    const s = await serve({ steps: [{ status: 429, headers: { 'retry-after': '3600' } }] });
    const error = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_RATE_LIMIT');
    expect(error.message).toContain('asked to wait 3600 s');
    expect(s.requests).toHaveLength(1);
  });

  it('does not retry a 401; the message names the fix and never the key', async () => {
    const key = 'sk-secret-abcdef123456';
    const s = await serve({ steps: [{ status: 401, message: `Incorrect API key provided: ${key}` }] });
    const error = await failure(
      adapter(s, { apiKey: key }).generate({ system: '', tools: [], messages: HELLO }),
    );
    expect(error.code).toBe('MODEL_AUTH');
    expect(error.message).toContain('apiKey');
    expect(error.message).not.toContain(key);
    expect(s.requests).toHaveLength(1);
  });

  it('reports a too-long prompt as MODEL_CONTEXT_LENGTH', async () => {
    const s = await serve({
      steps: [{ status: 400, message: "This model's maximum context length is 8192 tokens." }],
    });
    const error = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_CONTEXT_LENGTH');
    expect(s.requests).toHaveLength(1);
  });

  it('retries a refused connection, then reports MODEL_NETWORK naming the URL', async () => {
    const s = await serve();
    const baseURL = s.baseURL;
    await s.close();
    const { delays, sleep } = recordingSleep();
    const model = openaiCompatible({ baseURL, model: 'm', retry: { sleep, maxRetries: 2 } });
    const error = await failure(model.generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_NETWORK');
    expect(error.message).toContain(`${baseURL}/chat/completions`);
    expect(error.attempts).toBe(3);
    expect(delays).toHaveLength(2);
  });

  it('does not retry once the stream has started: a dropped connection is MODEL_NETWORK', async () => {
    const s = await serve({ steps: [{ text: 'partial answer', dropAfterChunks: 3 }, { text: 'never' }] });
    const error = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_NETWORK');
    expect(s.requests).toHaveLength(1);
  });

  it('reports an in-stream error object as MODEL_STREAM, not retried', async () => {
    const s = await serve({
      steps: [{ text: 'abc', streamError: { afterChunks: 2, message: 'overloaded' } }],
    });
    const error = await failure(adapter(s).generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_STREAM');
    expect(error.message).toContain('overloaded');
    expect(s.requests).toHaveLength(1);
  });

  it('reports garbage as MODEL_BAD_RESPONSE and a stream cut short as MODEL_NETWORK', async () => {
    const s = await serve({
      steps: [
        { raw: 'data: {not json\n\n' },
        { raw: 'data: {"choices":[{"delta":{"content":"half"}}]}\n\n' },
        { raw: '<html>proxy error</html>', contentType: 'text/html' },
      ],
    });
    const model = adapter(s);
    const req = { system: '', tools: [], messages: HELLO };
    expect((await failure(model.generate(req))).code).toBe('MODEL_BAD_RESPONSE');
    expect((await failure(model.generate(req))).code).toBe('MODEL_NETWORK');
    const html = await failure(model.generate(req));
    expect(html.code).toBe('MODEL_BAD_RESPONSE');
    expect(html.message).toContain('Check baseURL');
  });
});

describe('openaiCompatible: idle timeout', () => {
  it('a server that never answers is retried, then MODEL_TIMEOUT', async () => {
    const s = await serve({ fallback: { hang: true } });
    const { delays, sleep } = recordingSleep();
    // Long enough for a loaded machine to deliver each request before the client gives up on it.
    const model = adapter(s, { idleTimeoutMs: 1000, retry: { sleep, maxRetries: 1 } });
    const error = await failure(model.generate({ system: '', tools: [], messages: HELLO }));
    expect(error.code).toBe('MODEL_TIMEOUT');
    expect(error.message).toContain('idleTimeoutMs');
    expect(delays).toHaveLength(1);
    // The server may log the second request after the client has already given up on it.
    await waitFor(() => s.requests.length === 2 && s.requests.every((r) => r.closedEarly), {
      timeoutMs: 30_000,
      message: 'both closed',
    });
  });

  it('a stream that stalls after it started is MODEL_TIMEOUT, not retried', async () => {
    const s = await serve({
      steps: [{ text: 'started then stalled', hangAfterChunks: 2 }],
      fallback: { hang: true },
    });
    const seen: string[] = [];
    const model = adapter(s, { idleTimeoutMs: 1500 });
    const error = await failure(
      model.generate({ system: '', tools: [], messages: HELLO, onEvent: (e) => seen.push(e.type) }),
    );
    expect(error.code).toBe('MODEL_TIMEOUT');
    expect(seen).toEqual(['text-delta']);
    expect(s.requests).toHaveLength(1);
    await waitFor(() => s.requests[0]?.closedEarly, { timeoutMs: 30_000, message: 'server sees the close' });
  });
});

describe('openaiCompatible: abort', () => {
  it('abort mid-stream rejects with MODEL_ABORTED and closes the HTTP request', async () => {
    const s = await serve({ steps: [{ text: 'a long answer that never ends', hangAfterChunks: 3 }] });
    const controller = new AbortController();
    const pending = adapter(s).generate({
      system: '',
      tools: [],
      messages: HELLO,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'text-delta') controller.abort();
      },
    });
    const error = await failure(pending);
    expect(error.code).toBe('MODEL_ABORTED');
    await waitFor(() => s.requests[0]?.closedEarly, { timeoutMs: 30_000, message: 'server sees the abort' });
  });

  it('abort before the response headers closes the request too', async () => {
    const s = await serve({ steps: [{ hang: true }] });
    const controller = new AbortController();
    const pending = adapter(s).generate({
      system: '',
      tools: [],
      messages: HELLO,
      signal: controller.signal,
    });
    await waitFor(() => s.requests.length === 1, { timeoutMs: 30_000, message: 'request received' });
    controller.abort();
    expect((await failure(pending)).code).toBe('MODEL_ABORTED');
    await waitFor(() => s.requests[0]?.closedEarly, { timeoutMs: 30_000, message: 'server sees the abort' });
  });

  it('abort during a backoff wait ends it at once, with no further request', async () => {
    const s = await serve({ steps: [{ status: 503 }, { text: 'never' }] });
    const controller = new AbortController();
    const model = adapter(s, {
      retry: {
        sleep: (_ms, signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
            controller.abort();
          }),
      },
    });
    const error = await failure(
      model.generate({ system: '', tools: [], messages: HELLO, signal: controller.signal }),
    );
    expect(error.code).toBe('MODEL_ABORTED');
    expect(s.requests).toHaveLength(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const s = await serve({ steps: [{ text: 'never' }] });
    const error = await failure(
      adapter(s).generate({ system: '', tools: [], messages: HELLO, signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe('MODEL_ABORTED');
    expect(s.requests).toHaveLength(0);
  });
});

describe('openaiCompatible: options', () => {
  it('throws MODEL_CONFIG at once for a missing model or a baseURL that is not http(s)', () => {
    expect(() => openaiCompatible({ baseURL: 'http://127.0.0.1:1/v1', model: '' })).toThrow(/model option/);
    expect(() => openaiCompatible({ baseURL: 'localhost:11434/v1', model: 'm' })).toThrow(
      /not an http\(s\) URL/,
    );
    expect(() => openaiCompatible({ baseURL: 'https://api.openai.com/v1/', model: 'm' })).not.toThrow();
  });
});

describe('createChatStreamState', () => {
  const feed = (chunks: object[]) => {
    const state = createChatStreamState();
    for (const c of chunks) state.feed({ choices: [{ delta: c }] } as never);
    return state.result().toolCalls;
  };

  it('separates calls that share index 0 but carry different ids, and takes repeated names whole', () => {
    expect(
      feed([
        { tool_calls: [{ index: 0, id: 'a', function: { name: 'read', arguments: '{"p":' } }] },
        { tool_calls: [{ index: 0, function: { name: 'read', arguments: '1}' } }] },
        { tool_calls: [{ index: 0, id: 'b', function: { name: 'list', arguments: '{}' } }] },
      ]),
    ).toEqual([
      { id: 'a', name: 'read', arguments: { p: 1 } },
      { id: 'b', name: 'list', arguments: {} },
    ]);
  });

  it('follows fragments without an index by id, else the last call; generates missing ids', () => {
    const calls = feed([
      { tool_calls: [{ id: 'x', function: { name: 'one', arguments: '{"a"' } }] },
      { tool_calls: [{ function: { arguments: ':2}' } }] },
      { tool_calls: [{ id: 'y', function: { name: 'two', arguments: '{}' } }] },
    ]);
    expect(calls).toEqual([
      { id: 'x', name: 'one', arguments: { a: 2 } },
      { id: 'y', name: 'two', arguments: {} },
    ]);
    const anon = feed([{ tool_calls: [{ index: 0, function: { name: 'n', arguments: '{}' } }] }]);
    expect(anon[0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
  });
});

describe('toChatMessages', () => {
  const PNG = { type: 'image' as const, mimeType: 'image/png', data: 'iVBORw0KGgo=' };
  const history: Message[] = [
    { role: 'user', content: 'show me' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'c1', name: 'shot', arguments: { w: 1 } },
        { id: 'c2', name: 'note', arguments: {} },
      ],
    },
    { role: 'tool', toolCallId: 'c1', name: 'shot', content: [{ type: 'text', text: 'a screenshot' }, PNG] },
    { role: 'tool', toolCallId: 'c2', name: 'note', content: 'noted', isError: true },
    { role: 'user', content: 'thanks', isMeta: true },
  ];

  it('with vision: tool results stay text, their images follow in one user message after the run', () => {
    expect(toChatMessages('', history, true)).toEqual([
      { role: 'user', content: 'show me' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{"w":1}' } },
          { id: 'c2', type: 'function', function: { name: 'note', arguments: '{}' } },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'c1',
        content: 'a screenshot\n[1 image(s) attached in the next message]',
      },
      { role: 'tool', tool_call_id: 'c2', content: 'noted' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Image(s) returned by tool call c1 (shot):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      { role: 'user', content: 'thanks' },
    ]);
  });

  it('without vision: images become a short text note', () => {
    const out = toChatMessages('', history, false);
    expect(out).toHaveLength(5);
    expect(out[2]).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'a screenshot\n[image image/png, 9 bytes: not shown, this model does not accept images]',
    });
  });

  it('user images: image_url parts with vision, text otherwise; extraBody and maxTokens pass through', () => {
    const msgs: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, PNG] }];
    const body = toChatCompletionsBody(
      { system: '', tools: [], messages: msgs },
      { baseURL: 'x', model: 'm', vision: true, maxTokens: 50, extraBody: { reasoning_effort: 'low' } },
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
    expect(body).toMatchObject({ max_tokens: 50, reasoning_effort: 'low' });
  });

  it('replays invalid arguments verbatim so the model sees what it sent', () => {
    const out = toChatMessages(
      '',
      [
        {
          role: 'assistant',
          content: 'x',
          toolCalls: [{ id: 'c', name: 't', arguments: {}, invalidArguments: '{bad' }],
        },
      ],
      false,
    );
    expect(out[0]).toMatchObject({ tool_calls: [{ function: { arguments: '{bad' } }] });
  });
});
