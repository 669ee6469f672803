import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';

it('leaves a marked sleeper behind when LEAK_MODE=leak', async () => {
  const ns = process.env.WAVE_REAPER_NAMESPACE;
  expect(ns).toMatch(/^test-leak-project-/);
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)', 'leaky-sleeper'], {
    stdio: 'ignore',
    env: { ...process.env, WAVE_REAPER_ID: `${ns}:leaky` },
  });
  await new Promise((resolve) => child.once('spawn', resolve));
  if (process.env.LEAK_PID_FILE) writeFileSync(process.env.LEAK_PID_FILE, String(child.pid));
  if (process.env.LEAK_MODE !== 'leak') {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
});
