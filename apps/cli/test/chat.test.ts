import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
    expect(t.screen()).toContain('Allow always (this session)');
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

    t.keys('/tools', 'Enter');
    await t.waitFor('mcp__hello__sleep');

    t.keys('/exit', 'Enter');
    await t.waitFor('EXIT=0');
    expect(t.screen()).toMatch(/Session \S+ saved\. Resume it with: wave chat --resume \S+/);
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
  });

  it('Ctrl-C during a slow tool cancels the turn; a second Ctrl-C exits; no process is left', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const model = await fakeModel([
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
    t.keys('Take a nap', 'Enter');
    await t.waitFor('● mcp__hello__sleep');
    expect(running()).toBeGreaterThan(0);
    t.keys('C-c');
    await t.waitFor('Cancelled.');
    // The cancelled turn asked the model nothing more, and the prompt is back.
    expect(model.requests).toHaveLength(1);
    await t.waitFor(/^> $/m);
    t.keys('C-c');
    await t.waitFor('EXIT=130');
    await waitFor(() => running() === 0, { timeoutMs: 15_000 });
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
