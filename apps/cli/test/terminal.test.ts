import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findProcessesByMarker, fixturePath, waitFor } from '@wave/testkit';
import { describe, expect, it } from 'vitest';
import { sandbox, terminal } from './helpers';

const hello = fixturePath('hello');
const namespace = process.env.WAVE_REAPER_NAMESPACE ?? '';

describe('prompts and Ctrl-C through a pseudo-terminal', () => {
  it('remove asks (default no): Enter keeps the server, y removes it', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'a', '--', 'node', 'x.js']);
    const file = join(s.home, 'mcp.json');
    const before = await readFile(file, 'utf8');
    let t = terminal(s, ['mcp', 'remove', 'a']);
    await t.waitFor(`Remove MCP server "a" from ${file}?`);
    t.keys('Enter');
    await t.waitFor('EXIT=1');
    expect(t.screen()).toContain('Cancelled; nothing changed.');
    expect(await readFile(file, 'utf8')).toBe(before);
    t = terminal(s, ['mcp', 'remove', 'a']);
    await t.waitFor('Remove MCP server "a"');
    t.keys('y');
    await t.waitFor('EXIT=0');
    expect(JSON.parse(await readFile(file, 'utf8')).mcpServers).toEqual({});
  });

  it('remove: a write that fails after the question (the file is gone) is reported, exit 1, nothing written', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'a', '--', 'node', 'x.js']);
    const file = join(s.home, 'mcp.json');
    const t = terminal(s, ['mcp', 'remove', 'a']);
    await t.waitFor(`Remove MCP server "a" from ${file}?`);
    await rm(file);
    t.keys('y');
    const screen = await t.waitFor('EXIT=1');
    expect(screen).toContain(file);
    expect(screen).not.toContain('Removed MCP server');
    expect(screen).not.toContain('unexpected error');
    expect(await readdir(s.home)).not.toContain('mcp.json');
  });

  it('plugin remove asks like mcp remove (default no): Enter keeps the plugin, y removes it', async () => {
    const s = await sandbox();
    const src = join(s.root, 'p');
    await mkdir(src);
    await writeFile(join(src, 'plugin.json'), JSON.stringify({ name: 'tools', version: '1.0.0' }));
    await writeFile(join(src, '.mcp.json'), JSON.stringify({ mcpServers: { ptool: { command: 'node' } } }));
    expect((await s.wave(['plugin', 'add', src])).code).toBe(0);
    const root = join(s.home, 'plugins', 'tools');
    let t = terminal(s, ['plugin', 'remove', 'tools']);
    await t.waitFor(`Remove plugin "tools" (${root})?`);
    t.keys('Enter');
    await t.waitFor('EXIT=1');
    expect(t.screen()).toContain('Cancelled; nothing changed.');
    expect(await readdir(root)).toContain('plugin.json');
    t = terminal(s, ['plugin', 'remove', 'tools']);
    await t.waitFor('Remove plugin "tools"');
    t.keys('y');
    await t.waitFor('EXIT=0');
    expect(await readdir(join(s.home, 'plugins'))).toEqual([]);
  });

  it('the trust prompt on a terminal: n refuses, y trusts and connects', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { repo: { command: process.execPath, args: [hello] } } }),
    );
    let t = terminal(s, ['mcp', 'connect', 'repo']);
    await t.waitFor('Trust and start "repo"?');
    expect(t.screen()).toContain(`It runs: ${process.execPath} ${hello}`);
    t.keys('n');
    await t.waitFor('EXIT=1');
    expect(findProcessesByMarker(namespace)).toEqual([]);
    t = terminal(s, ['mcp', 'connect', 'repo']);
    await t.waitFor('Trust and start "repo"?');
    t.keys('y');
    await t.waitFor('EXIT=0');
    expect(t.screen()).toMatch(/connected repo in \d+ ms, 8 tools/);
  });

  it('colour on a terminal only: none with NO_COLOR, none through a pipe, none in --json', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const esc = '\u001b[';
    let t = terminal(s, ['mcp', 'list']);
    await t.waitFor('EXIT=0');
    expect(t.coloredScreen()).toContain(`${esc}1mhello`);
    // no-color.org: an empty NO_COLOR does not turn colour off.
    t = terminal(s, ['mcp', 'list'], { NO_COLOR: '' });
    await t.waitFor('EXIT=0');
    expect(t.coloredScreen()).toContain(`${esc}1mhello`);
    t = terminal(s, ['mcp', 'list'], { NO_COLOR: '1' });
    await t.waitFor('EXIT=0');
    expect(t.screen()).toContain('hello  stdio  not connected');
    expect(t.coloredScreen()).not.toContain(esc);
    t = terminal(s, ['mcp', 'doctor', '--json']);
    await t.waitFor('EXIT=0');
    expect(t.screen()).toContain('"ok": true');
    expect(t.coloredScreen()).not.toContain(esc);
    // Through a pipe (helpers' wave(), here with colour not turned off): no colour either.
    const r = await s.wave(['mcp', 'doctor'], { env: { NO_COLOR: '' } });
    expect(r.stdout).toContain('ok  hello (user)  connected');
    expect(r.stdout + r.stderr).not.toContain(esc);
  });

  it('Ctrl-C during a slow tool call exits 130 and leaves no process', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    const t = terminal(s, ['mcp', 'call', 'hello', 'sleep', '{"ms":600000}']);
    // The server is up and the call is in flight once the fixture process exists.
    await waitFor(() => findProcessesByMarker(namespace).length > 0, { timeoutMs: 60_000 });
    t.keys('C-c');
    await t.waitFor('EXIT=130');
    await waitFor(() => findProcessesByMarker(namespace).length === 0, { timeoutMs: 15_000 });
  });
});
