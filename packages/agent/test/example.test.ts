import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const require = createRequire(import.meta.url);

test('the README example runs and prints what it says', async () => {
  const tsx = require.resolve('tsx/cli');
  const example = fileURLToPath(new URL('../examples/hello.ts', import.meta.url));
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [tsx, '--conditions=@wave/source', example],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
  expect(out.trim().split('\n')).toEqual([
    'disconnected',
    'The tool answered: "Hello from MCP!"',
    'connected',
  ]);
});
