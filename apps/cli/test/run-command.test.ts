import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type FakeModelStep,
  findProcessesByMarker,
  fixturePath,
  startFakeAnthropic,
  startFakeOpenAI,
  waitFor,
} from '@wave/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sandbox, terminal } from './helpers';

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

  it('calls made inside Exec (auto mode, 8 tools) are listed with their parent and checked against the rules', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const code =
      'const a = await tools.mcp__hello__echo({ text: "via exec" }); let b; try { b = await tools.mcp__hello__add({ a: 1, b: 2 }); } catch (e) { b = String(e); } return { a, b };';
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 'x1', name: 'Exec', arguments: { code } }] },
      { text: 'Exec done.' },
    ]);
    const base = ['--base-url', model.baseURL, '--model', 'fake-1', '--allow', 'mcp__hello__echo', '--json'];
    // The turn dials hello before declaring tools: 8 tools, so auto mode declares Exec.
    const r = await s.wave(['run', 'use exec', ...base]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.text).toBe('Exec done.');
    expect(out.toolCalls).toMatchObject([
      { id: 'x1', name: 'Exec', blocked: false },
      { name: 'mcp__hello__echo', parent: 'x1', blocked: false, isError: false },
      { name: 'mcp__hello__add', parent: 'x1', blocked: true },
    ]);
    expect(out.toolCalls[0].output).toContain('via exec');
    expect(out.toolCalls[1]).not.toHaveProperty('output');
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

  it('Anthropic: the key from ANTHROPIC_API_KEY, the provider from --provider', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await startFakeAnthropic({
      steps: [
        { text: '', toolCalls: [{ id: 'tu_1', name: 'mcp__hello__add', arguments: { a: 2, b: 3 } }] },
        { text: 'Five.' },
      ],
    });
    onTestFinished(() => model.close());
    const r = await s.wave(
      [
        'run',
        'add 2 and 3',
        '--json',
        '--provider',
        'anthropic',
        '--base-url',
        model.baseURL,
        '--model',
        'claude-test',
        '--tool-mode',
        'flat',
        '--allow',
        'mcp__hello__add',
      ],
      { env: { ANTHROPIC_API_KEY: 'sk-ant-test' } },
    );
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ model: 'anthropic:claude-test', text: 'Five.' });
    expect(out.toolCalls[0]).toMatchObject({ name: 'mcp__hello__add', blocked: false });
    expect(out.toolCalls[0].output).toContain('5');
    expect(model.requests[0]?.headers['x-api-key']).toBe('sk-ant-test');
  });

  it('a project server not trusted yet stays off with a hint; --trust trusts it and it runs', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { repo: { command: process.execPath, args: [hello] } } }),
    );
    const call = {
      text: '',
      toolCalls: [{ id: 'r1', name: 'mcp__repo__echo', arguments: { text: 'from repo' } }],
    };
    const model = await fakeModel([call, { text: 'No repo.' }, call, { text: 'Repo answered.' }]);
    const base = [
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'flat',
      '--allow',
      'mcp__repo__*',
    ];
    let r = await s.wave(['run', 'hi', '--json', ...base]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('skipped the project server "repo": not trusted on this machine');
    expect(r.stderr).toContain('wave mcp trust repo');
    expect(JSON.parse(r.stdout).toolCalls[0]).toMatchObject({ isError: true });
    expect(findProcessesByMarker(namespace)).toEqual([]);
    r = await s.wave(['run', 'hi', '--json', '--trust', ...base]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).toolCalls[0]).toMatchObject({ isError: false, output: 'from repo' });
    // Trusted from now on.
    r = await s.wave(['mcp', 'list', '--json']);
    expect(JSON.parse(r.stdout).servers[0].trusted).toBe(true);
  });

  it('a server switched off with wave mcp disable is never started', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    expect((await s.wave(['mcp', 'disable', 'hello'])).code).toBe(0);
    const model = await fakeModel([callEcho, { text: 'It is off.' }]);
    const r = await s.wave([
      'run',
      'hi',
      '--json',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--allow',
      'mcp__hello__*',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.toolCalls[0]).toMatchObject({ name: 'mcp__hello__echo', isError: true });
    // Nothing was declared to the model: the server never ran.
    expect(JSON.stringify(model.requests[0]?.body)).not.toContain('mcp__hello__');
    expect(findProcessesByMarker(namespace)).toEqual([]);
  });

  it('a model failure exits 1 (--json carries the error); --continue resumes the latest session, --resume <id> a given one', async () => {
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
    // A later, unrelated session; then --resume <id> goes back to the first one by its id.
    model.enqueue({ text: 'Other.' });
    r = await s.wave(['run', 'a new topic', '--json', ...base]);
    expect(JSON.parse(r.stdout).sessionId).not.toBe(first);
    model.enqueue({ text: 'Resumed.' });
    r = await s.wave(['run', 'and again?', '--json', '--resume', first, ...base]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ sessionId: first, text: 'Resumed.' });
    const resumed = JSON.stringify(model.requests.at(-1)?.body);
    expect(resumed).toContain('kumquat');
    expect(resumed).not.toContain('a new topic');
    r = await s.wave(['run', 'hi', '--resume', 'nope-123', ...base]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No session "nope-123"');
    r = await s.wave(['run', '', ...base]);
    expect(r.code).toBe(2);
    // "-" reads the prompt from stdin.
    model.enqueue({ text: 'Read it.' });
    r = await s.wave(['run', '-', ...base], { input: 'a prompt from stdin' });
    expect(r.stdout).toBe('Read it.\n');
    expect(JSON.stringify(model.requests.at(-1)?.body)).toContain('a prompt from stdin');
  });

  it('Ctrl-C during a slow tool call cancels the run: exit 130, no process left', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 's1', name: 'mcp__hello__sleep', arguments: { ms: 600_000 } }] },
    ]);
    const t = terminal(s, [
      'run',
      'nap',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'flat',
      '--allow',
      'mcp__hello__sleep',
    ]);
    await waitFor(() => model.requests.length === 1 && findProcessesByMarker(namespace).length > 0, {
      timeoutMs: 60_000,
    });
    t.keys('C-c');
    await t.waitFor('EXIT=130');
    expect(t.screen()).toContain('wave: cancelled.');
    await waitFor(() => findProcessesByMarker(namespace).length === 0, { timeoutMs: 15_000 });
  });

  it('Ctrl-C while an Exec script waits on a slow tool cancels the run: exit 130, no process left', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    // The echo inside the script is reported when it returns: the script is then running, on to the sleep.
    const code =
      'await tools.mcp__hello__echo({ text: "before" }); return await tools.mcp__hello__sleep({ ms: 600000 });';
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 'x1', name: 'Exec', arguments: { code } }] },
    ]);
    const t = terminal(s, [
      'run',
      'nap in a script',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'exec',
      '--allow',
      'mcp__hello__*',
    ]);
    await t.waitFor(/tool {3}mcp__hello__echo .*: ok/);
    expect(findProcessesByMarker(namespace).length).toBeGreaterThan(0);
    t.keys('C-c');
    await t.waitFor('EXIT=130');
    expect(t.screen()).toContain('wave: cancelled.');
    expect(model.requests).toHaveLength(1);
    await waitFor(() => findProcessesByMarker(namespace).length === 0, { timeoutMs: 15_000 });
  });

  it('wave chat without a terminal refuses and points to wave run (exit 2)', async () => {
    const s = await sandbox();
    const r = await s.wave(['chat', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('wave run');
  });
});
