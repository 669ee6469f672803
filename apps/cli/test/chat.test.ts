import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type FakeModelStep,
  findProcessesByMarker,
  fixturePath,
  startFakeOpenAI,
  waitFor,
} from '@wave/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sandbox, type Terminal, terminal } from './helpers';

const hello = fixturePath('hello');
const namespace = process.env.WAVE_REAPER_NAMESPACE ?? '';
const running = () => findProcessesByMarker(namespace).length;

async function fakeModel(steps: FakeModelStep[]) {
  const server = await startFakeOpenAI({ steps });
  onTestFinished(() => server.close());
  return server;
}

/** Wait until `text` appears at least `n` times on the screen (bounded). */
async function waitForCount(t: Terminal, text: string, n: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(() => t.screen().split(text).length - 1 >= n, {
    timeoutMs,
    message: `${n} x ${JSON.stringify(text)} on the screen`,
  }).catch((err: Error) => {
    throw new Error(`${err.message}\nscreen:\n${t.screen()}`);
  });
}

describe('wave chat through a pseudo-terminal', () => {
  it('a tool call with an approval prompt, /mcp disconnect then reconnect, /exit with no process left', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      {
        text: 'Calling echo.',
        toolCalls: [{ id: 'c1', name: 'mcp__hello__echo', arguments: { text: 'hi there' } }],
      },
      { text: 'Echo done.' },
    ]);
    const t = terminal(s, ['chat', '--base-url', model.baseURL, '--model', 'fake-1', '--tool-mode', 'flat']);
    await t.waitFor('/help for commands');
    expect(t.screen()).toContain('openai-compatible:fake-1');
    t.keys('Say hi', 'Enter');
    await t.waitFor('Allow mcp__hello__echo?');
    expect(t.screen()).toContain('Allow always');
    expect(t.screen()).toContain('Deny');
    t.keys('Enter');
    await t.waitFor('Echo done.');
    expect(t.screen()).toMatch(/● mcp__hello__echo \{"text":"hi there"\}/);
    expect(t.screen()).toMatch(/⎿ ok/);
    expect(t.screen()).toMatch(/^ {4}hi there$/m);
    expect(running()).toBeGreaterThan(0);

    t.keys('/mcp', 'Enter');
    await t.waitFor('Which server?');
    expect(t.screen()).toContain('hello (user): connected, 8 tools');
    t.keys('Enter');
    await t.waitFor('Disconnect');
    t.keys('Enter');
    await t.waitFor(/^hello: disconnected \(by you\)$/m);
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });

    t.keys('/mcp', 'Enter');
    await waitForCount(t, 'Which server?', 2);
    t.keys('Enter');
    await t.waitFor(/Connect\s*\n/);
    t.keys('Enter');
    await t.waitFor(/^connected hello, 8 tools$/m);
    expect(running()).toBeGreaterThan(0);
    const before = findProcessesByMarker(namespace);

    // The direct form: a reconnect starts a new process.
    t.keys('/mcp reconnect hello', 'Enter');
    await waitForCount(t, 'connected hello, 8 tools', 2);
    const after = findProcessesByMarker(namespace);
    expect(after.length).toBeGreaterThan(0);
    expect(after).not.toEqual(before);

    t.keys('/tools', 'Enter');
    await t.waitFor('mcp__hello__sleep');

    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    expect(t.screen()).toMatch(/Session \S+ saved\. Resume it with: wave chat --resume \S+/);
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it('Ctrl-C cancels a hanging model request, then a slow tool call; a second Ctrl-C exits; no process is left', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      { hang: true },
      { text: 'Sleeping.', toolCalls: [{ id: 's1', name: 'mcp__hello__sleep', arguments: { ms: 600_000 } }] },
    ]);
    const t = terminal(s, [
      'chat',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'flat',
      '--allow',
      'mcp__hello__sleep',
    ]);
    await t.waitFor('/help for commands');
    // A model request that never answers: Ctrl-C aborts it (the socket closes).
    t.keys('Hello?', 'Enter');
    await waitFor(() => model.requests.length === 1, { timeoutMs: 60_000 });
    t.keys('C-c');
    await t.waitFor('Cancelled.');
    await waitFor(() => model.requests[0]?.closedEarly === true, { timeoutMs: 15_000 });
    t.keys('Take a nap', 'Enter');
    await t.waitFor('● mcp__hello__sleep');
    expect(running()).toBeGreaterThan(0);
    t.keys('C-c');
    await waitForCount(t, 'Cancelled.', 2);
    // The cancelled turn asked the model nothing more, and the prompt is back.
    expect(model.requests).toHaveLength(2);
    await t.waitFor(/^> $/m);
    t.keys('C-c');
    await t.waitFor('EXIT=130');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it('"Allow always" holds for the session, also when it is resumed', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const echo = (id: string) => ({
      text: '',
      toolCalls: [{ id, name: 'mcp__hello__echo', arguments: { text: `echo ${id}` } }],
    });
    const model = await fakeModel([
      echo('e1'),
      { text: 'First done.' },
      echo('e2'),
      { text: 'Second done.' },
      echo('e3'),
      { text: 'Third done.' },
    ]);
    const args = ['chat', '--base-url', model.baseURL, '--model', 'fake-1', '--tool-mode', 'flat'];
    let t = terminal(s, args);
    await t.waitFor('/help for commands');
    t.keys('one', 'Enter');
    await t.waitFor('Allow mcp__hello__echo?');
    t.keys('Down', 'Enter');
    await t.waitFor('First done.');
    t.keys('two', 'Enter');
    await t.waitFor('Second done.');
    expect(t.screen().split('Allow mcp__hello__echo?').length - 1).toBe(1);
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');

    t = terminal(s, [...args, '--continue']);
    await t.waitFor('/help for commands');
    t.keys('three', 'Enter');
    await t.waitFor('Third done.');
    expect(t.screen()).toMatch(/^ {4}echo e3$/m);
    expect(t.screen()).not.toContain('Allow mcp__hello__echo?');
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
  });

  it('Deny: the tool does not run, the model is told, and the next call asks again', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 'd1', name: 'mcp__hello__echo', arguments: { text: 'secret plan' } }] },
      { text: 'Understood, not run.' },
      { text: '', toolCalls: [{ id: 'd2', name: 'mcp__hello__echo', arguments: { text: 'again' } }] },
      { text: 'Asked again.' },
    ]);
    const t = terminal(s, ['chat', '--base-url', model.baseURL, '--model', 'fake-1', '--tool-mode', 'flat']);
    await t.waitFor('/help for commands');
    t.keys('one', 'Enter');
    await t.waitFor('Allow mcp__hello__echo?');
    t.keys('Down', 'Down', 'Enter');
    await t.waitFor('Understood, not run.');
    // The model got a refusal as the call's result, not the echo.
    const body = model.requests[1]?.body as { messages?: { role: string; content?: unknown }[] } | undefined;
    const results = (body?.messages ?? []).filter((m) => m.role === 'tool');
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results[0]?.content)).not.toContain('secret plan');
    t.keys('two', 'Enter');
    await waitForCount(t, 'Allow mcp__hello__echo?', 2);
    t.keys('Enter');
    await t.waitFor('Asked again.');
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it('Ctrl-C on an approval question denies the call and cancels the turn; the chat goes on', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 'q1', name: 'mcp__hello__echo', arguments: { text: 'no' } }] },
      { text: 'Still here.' },
    ]);
    const t = terminal(s, ['chat', '--base-url', model.baseURL, '--model', 'fake-1', '--tool-mode', 'flat']);
    await t.waitFor('/help for commands');
    t.keys('one', 'Enter');
    await t.waitFor('Allow mcp__hello__echo?');
    t.keys('C-c');
    await t.waitFor('Cancelled.');
    expect(model.requests).toHaveLength(1);
    t.keys('two', 'Enter');
    await t.waitFor('Still here.');
    // The cancelled call got a result, so the history stays valid for the model API.
    const body = model.requests[1]?.body as
      | { messages?: { role: string; tool_call_id?: string }[] }
      | undefined;
    expect((body?.messages ?? []).filter((m) => m.role === 'tool')).toMatchObject([{ tool_call_id: 'q1' }]);
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it("a server's elicitation form is asked field by field and answered", async () => {
    const s = await sandbox();
    const clientFeatures = join(dirname(hello), 'client-features.mjs');
    await s.wave(['mcp', 'add', 'cf', '--', process.execPath, clientFeatures]);
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 'k1', name: 'mcp__cf__ask', arguments: {} }] },
      { text: 'Thanks.' },
    ]);
    const t = terminal(s, [
      'chat',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'flat',
      '--allow',
      'mcp__cf__ask',
    ]);
    await t.waitFor('/help for commands');
    t.keys('ask me', 'Enter');
    await t.waitFor('The MCP server "cf" asks: Who are you?');
    await t.waitFor('Fill in the form');
    t.keys('Enter');
    for (const field of ['name', 'age', 'score', 'status', 'verified']) {
      await t.waitFor(new RegExp(`◆ +${field}`));
      t.keys('Enter');
    }
    await t.waitFor(/◆ +nickname \[optional\]/);
    t.keys('JD', 'Enter');
    await t.waitFor('Thanks.');
    const body = model.requests[1]?.body as { messages?: { role: string; content?: unknown }[] } | undefined;
    const result = JSON.parse(String((body?.messages ?? []).find((m) => m.role === 'tool')?.content));
    expect(result).toEqual({
      action: 'accept',
      content: { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true, nickname: 'JD' },
    });
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it('Ctrl-C during an Exec script cancels the turn; the chat goes on', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    // The echo inside the script is shown when it returns: the script is then running, on to the sleep.
    const code =
      'await tools.mcp__hello__echo({ text: "before" }); return await tools.mcp__hello__sleep({ ms: 600000 });';
    const model = await fakeModel([
      { text: '', toolCalls: [{ id: 'x1', name: 'Exec', arguments: { code } }] },
      { text: 'Still here.' },
    ]);
    const t = terminal(s, [
      'chat',
      '--base-url',
      model.baseURL,
      '--model',
      'fake-1',
      '--tool-mode',
      'exec',
      '--allow',
      'mcp__hello__*',
    ]);
    await t.waitFor('/help for commands');
    t.keys('Run a script', 'Enter');
    await t.waitFor(/↳ mcp__hello__echo .*ok/);
    t.keys('C-c');
    await t.waitFor('Cancelled.');
    // The cancelled turn asked the model nothing more.
    expect(model.requests).toHaveLength(1);
    await t.waitFor(/^> $/m);
    t.keys('and now?', 'Enter');
    await t.waitFor('Still here.');
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it('no model configured: says how (a local Ollama URL, an API key) and exits 2', async () => {
    const s = await sandbox();
    const t = terminal(s, ['chat']);
    const screen = await t.waitFor('EXIT=2');
    expect(screen).toContain('wave chat --base-url http://localhost:11434/v1 --model llama3.1');
    expect(screen).toMatch(/OPENAI_API_KEY|ANTHROPIC_API_KEY/);
  });

  it('Ctrl-C twice during a turn exits at once, servers stopped', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([{ hang: true }]);
    const t = terminal(s, ['chat', '--base-url', model.baseURL, '--model', 'fake-1']);
    await t.waitFor('/help for commands');
    t.keys('Hello?', 'Enter');
    // The turn dialed hello, then asked the model, which never answers.
    await waitFor(() => model.requests.length === 1 && running() > 0, { timeoutMs: 60_000 });
    // Both in one send: they usually arrive in one read, and each must count.
    t.keys('C-c', 'C-c');
    await t.waitFor('EXIT=130');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it("/mcp shows a failed server's reason; --continue resumes the conversation; /clear forgets it", async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'broken', '--', join(s.root, 'no-such-server')]);
    const model = await fakeModel([
      { text: 'Noted: kumquat.' },
      { text: 'It was kumquat.' },
      { text: 'Fresh.' },
    ]);
    const args = ['chat', '--base-url', model.baseURL, '--model', 'fake-1'];
    let t = terminal(s, args);
    await t.waitFor('/help for commands');
    t.keys('remember kumquat', 'Enter');
    await t.waitFor('Noted: kumquat.');
    t.keys('/mcp', 'Enter');
    await t.waitFor('Which server?');
    expect(t.screen()).toContain('broken (user): error');
    t.keys('Enter');
    await t.waitFor('Why it failed');
    t.keys('Down', 'Enter');
    await t.waitFor(/error: .*no-such-server/);
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');

    t = terminal(s, [...args, '--continue']);
    await t.waitFor('Resumed: 2 earlier messages');
    expect(t.screen()).toContain('> remember kumquat');
    t.keys('which word?', 'Enter');
    await t.waitFor('It was kumquat.');
    expect(JSON.stringify(model.requests[1]?.body)).toContain('remember kumquat');
    t.keys('/clear', 'Enter');
    await t.waitFor('Conversation cleared.');
    t.keys('hello again', 'Enter');
    await t.waitFor('Fresh.');
    expect(JSON.stringify(model.requests[2]?.body)).not.toContain('kumquat');
    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    expect(running()).toBe(0);
  });

  it('a repository server asks for trust first; refused, /mcp can trust and connect it later', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { repo: { command: process.execPath, args: [hello] } } }),
    );
    const model = await fakeModel([]);
    const t = terminal(s, ['chat', '--base-url', model.baseURL, '--model', 'fake-1']);
    await t.waitFor('Trust and allow "repo"?');
    expect(t.screen()).toContain(`It runs: ${process.execPath} ${hello}`);
    t.keys('n');
    await t.waitFor('/help for commands');
    t.keys('/mcp', 'Enter');
    await t.waitFor('Which server?');
    expect(t.screen()).toContain('repo (project): not trusted');
    t.keys('Enter');
    await t.waitFor('Trust and connect');
    t.keys('Enter');
    await t.waitFor(/^connected repo, 8 tools$/m);
    expect(running()).toBeGreaterThan(0);
    t.keys('C-d');
    await t.waitFor('EXIT=0');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
    // Trusted now: a new chat does not ask.
    const again = terminal(s, ['chat', '--base-url', model.baseURL, '--model', 'fake-1']);
    await again.waitFor('/help for commands');
    expect(again.screen()).not.toContain('Trust and allow');
    again.keys('/exit', 'Enter');
    await again.waitFor('EXIT=0');
  });
});
