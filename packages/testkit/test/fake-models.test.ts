import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeModelServer,
  fakeModelFixturePath,
  startFakeAnthropic,
  startFakeOpenAI,
} from '../src/fake-models';
import { markerEnv } from '../src/markers';
import { waitFor } from '../src/wait';
import { useCleanup } from './support';

const cleanup = useCleanup();
const servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function track(server: Promise<FakeModelServer>): Promise<FakeModelServer> {
  const s = await server;
  servers.push(s);
  return s;
}

function post(url: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** A response's JSON body, loosely typed for assertions on wire fields. */
// biome-ignore lint/suspicious/noExplicitAny: tests read nested wire fields without narrowing
const jsonOf = (res: Response): Promise<any> => res.json();

/** The `data:` payloads of an SSE body. */
function dataLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

describe('startFakeOpenAI', () => {
  it('answers a plain request with one chat.completion and records it', async () => {
    const s = await track(
      startFakeOpenAI({ steps: [{ text: 'hi', toolCalls: [{ name: 'get', arguments: { a: 1 } }] }] }),
    );
    expect(s.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await post(`${s.baseURL}/chat/completions`, { model: 'm', messages: [] });
    const json = await jsonOf(res);
    expect(json.choices[0]).toMatchObject({
      message: {
        content: 'hi',
        tool_calls: [{ id: 'call_fake_0', function: { name: 'get', arguments: '{"a":1}' } }],
      },
      finish_reason: 'tool_calls',
    });
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({ path: '/v1/chat/completions', body: { model: 'm' } });
    expect(s.pending).toBe(0);
  });

  it('streams text and argument fragments as chunks, then usage and [DONE]', async () => {
    const s = await track(
      startFakeOpenAI({ steps: [{ text: 'abcdef', toolCalls: [{ name: 't', arguments: { k: 'v' } }] }] }),
    );
    const res = await post(`${s.baseURL}/chat/completions`, {
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const data = dataLines(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('abcdef');
    const args = chunks.map((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
    expect(args).toBe('{"k":"v"}');
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
  });

  it('serves scripted statuses with retry headers, then the 400 of an exhausted script', async () => {
    const s = await track(startFakeOpenAI({ steps: [{ status: 429, headers: { 'retry-after': '2' } }] }));
    const first = await post(`${s.baseURL}/chat/completions`, {});
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('2');
    expect((await jsonOf(first)).error.message).toContain('429');
    const second = await post(`${s.baseURL}/chat/completions`, {});
    expect(second.status).toBe(400);
    expect((await jsonOf(second)).error.message).toContain('script exhausted');
  });

  it('marks a request closedEarly when the client aborts a hung stream', async () => {
    const s = await track(startFakeOpenAI({ steps: [{ text: 'abcdefgh', hangAfterChunks: 2 }] }));
    const controller = new AbortController();
    const res = await post(`${s.baseURL}/chat/completions`, { stream: true }, controller.signal);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    await waitFor(() => s.requests[0]?.closedEarly, { timeoutMs: 30_000, message: 'server sees the abort' });
  });
});

describe('startFakeAnthropic', () => {
  it('streams Messages events: text block, tool_use block with input_json_delta, message_delta', async () => {
    const s = await track(
      startFakeAnthropic({
        steps: [{ text: 'hey', toolCalls: [{ id: 'toolu_1', name: 't', arguments: { q: 1 } }] }],
      }),
    );
    const res = await post(`${s.baseURL}/v1/messages`, { stream: true, model: 'c' });
    const body = await res.text();
    const events = body
      .split('\n')
      .filter((l) => l.startsWith('event: '))
      .map((l) => l.slice(7));
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    const data = dataLines(body).map((d) => JSON.parse(d));
    const json = data
      .filter((d) => d.delta?.type === 'input_json_delta')
      .map((d) => d.delta.partial_json)
      .join('');
    expect(json).toBe('{"q":1}');
    expect(data.find((d) => d.type === 'message_delta').delta.stop_reason).toBe('tool_use');
  });

  it('answers 404 on the wrong path, naming the right one', async () => {
    const s = await track(startFakeAnthropic());
    const res = await post(`${s.url}/v1/chat/completions`, {});
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error.message).toContain('POST /v1/messages');
  });
});

describe('fixtures/fake-model.mjs (standalone process)', () => {
  it('prints its base URL, plays FAKE_MODEL_STEPS, then echoes; control routes list requests', async () => {
    const child = spawn(process.execPath, [fakeModelFixturePath()], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        FAKE_MODEL_STEPS: JSON.stringify([{ text: 'scripted' }]),
        ...markerEnv(cleanup.marker()),
      },
    });
    const lines = createInterface({ input: child.stdout });
    const baseURL = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        const m = /^FAKE_MODEL_BASE_URL (\S+)$/.exec(line);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`fake-model exited early (${code})`)));
    });
    const ask = async (text: string) => {
      const res = await post(`${baseURL}/chat/completions`, { messages: [{ role: 'user', content: text }] });
      return (await jsonOf(res)).choices[0].message.content;
    };
    expect(await ask('one')).toBe('scripted');
    expect(await ask('two')).toBe('echo: two');
    const origin = new URL(baseURL).origin;
    const recorded = await jsonOf(await fetch(`${origin}/__control/requests`));
    expect(recorded).toHaveLength(2);
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });
});
