import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FakeModelStep, findProcessesByMarker, fixturePath, startFakeOpenAI } from '@wave/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sandbox } from './helpers';

const hello = fixturePath('hello');
const namespace = process.env.WAVE_REAPER_NAMESPACE ?? '';

async function fakeModel(steps: FakeModelStep[]) {
  const server = await startFakeOpenAI({ steps });
  onTestFinished(() => server.close());
  return server;
}

const callEcho = {
  text: 'Calling echo.',
  toolCalls: [{ id: 'call_1', name: 'mcp__hello__echo', arguments: { text: 'hi there' } }],
  usage: { inputTokens: 11, outputTokens: 3 },
};

describe('wave run', () => {
  it('a tool call allowed by --allow runs; --json prints the documented object', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      callEcho,
      { text: 'The echo said hi there.', usage: { inputTokens: 20, outputTokens: 6 } },
    ]);
    const r = await s.wave([
      'run',
      'Say hi through echo',
      '--json',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'flat',
      '--allow',
      'mcp__hello__*',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.sessionId).toMatch(/^[0-9a-z]+-[0-9a-f]{8}$/);
    expect(out.toolCalls[0].ms).toBeTypeOf('number');
    out.sessionId = '<session>';
    out.toolCalls[0].ms = 0;
    expect(out).toMatchInlineSnapshot(`
      {
        "model": "openai-compatible:fake-1",
        "sessionId": "<session>",
        "stopReason": "end",
        "text": "The echo said hi there.",
        "toolCalls": [
          {
            "arguments": {
              "text": "hi there",
            },
            "blocked": false,
            "id": "call_1",
            "isError": false,
            "ms": 0,
            "name": "mcp__hello__echo",
            "output": "hi there",
          },
        ],
        "usage": {
          "cacheReadTokens": 0,
          "inputTokens": 31,
          "outputTokens": 9,
        },
      }
    `);
    // The model got the tool's result.
    const second = model.requests[1]?.body as { messages: { role: string; content: unknown }[] };
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: 'hi there' });
    expect(findProcessesByMarker(namespace)).toEqual([]);
  });

  it('without a rule the call is denied (nobody to ask), the turn goes on, exit 0; --deny wins over --allow', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      callEcho,
      { text: 'It was refused.' },
      callEcho,
      { text: 'Refused again.' },
    ]);
    const base = ['--base-url', model.baseURL, '--model', 'fake-1', '--tool-mode', 'flat'];
    let r = await s.wave(['run', 'Say hi', ...base]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('It was refused.\n');
    expect(r.stderr).toContain('wave: tool mcp__hello__echo {"text":"hi there"}: denied');
    const refused = model.requests[1]?.body as { messages: { role: string; content: string }[] };
    expect(refused.messages.at(-1)?.content).toMatch(/Permission denied/);

    r = await s.wave([
      'run',
      'Say hi',
      '--json',
      ...base,
      '--allow',
      'mcp__hello__*',
      '--deny',
      'mcp__hello__echo',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.text).toBe('Refused again.');
    expect(out.toolCalls).toMatchObject([{ name: 'mcp__hello__echo', blocked: true, isError: true }]);
    expect(findProcessesByMarker(namespace)).toEqual([]);
  });

  it('no model configured: exit 2 with how to point it at a local Ollama; settings.json is read', async () => {
    const s = await sandbox();
    let r = await s.wave(['run', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('wave chat --base-url http://localhost:11434/v1 --model llama3.1');
    const model = await fakeModel([{ text: 'From settings.' }]);
    await writeFile(
      join(s.home, 'settings.json'),
      JSON.stringify({ model: { provider: 'openai', baseURL: model.baseURL, model: 'from-file' } }),
    );
    r = await s.wave(['run', 'hi', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      text: 'From settings.',
      model: 'openai-compatible:from-file',
    });
    const modelOf = (i: number) => (model.requests[i]?.body as { model?: string } | undefined)?.model;
    expect(modelOf(0)).toBe('from-file');
    // The environment beats the file, a flag beats the environment.
    model.enqueue({ text: 'a' }, { text: 'b' });
    await s.wave(['run', 'hi'], { env: { WAVE_MODEL: 'from-env' } });
    expect(modelOf(1)).toBe('from-env');
    await s.wave(['run', 'hi', '--model', 'from-flag'], { env: { WAVE_MODEL: 'from-env' } });
    expect(modelOf(2)).toBe('from-flag');
  });

  it('a model failure exits 1 (--json carries the error); --continue resumes the latest session', async () => {
    const s = await sandbox();
    const model = await fakeModel([
      { status: 400, message: 'bad request: no such model' },
      { text: 'First answer.' },
      { text: 'Second answer.' },
    ]);
    const base = ['--base-url', model.baseURL, '--model', 'fake-1'];
    let r = await s.wave(['run', 'hi', '--json', ...base]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: 'error', error: { code: 'MODEL_FAILED' } });
    r = await s.wave(['run', 'remember the word kumquat', '--json', ...base]);
    const first = JSON.parse(r.stdout).sessionId;
    r = await s.wave(['run', 'which word?', '--json', '--continue', ...base]);
    expect(JSON.parse(r.stdout).sessionId).toBe(first);
    const sent = JSON.stringify(model.requests[2]?.body);
    expect(sent).toContain('kumquat');
    r = await s.wave(['run', 'hi', '--resume', 'nope-123', ...base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No session "nope-123"');
    r = await s.wave(['run', '', ...base]);
    expect(r.code).toBe(2);
  });
});
