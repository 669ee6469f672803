import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

/** Property names of `export interface <name> { ... }` in a source file (top level only). */
function optionNames(source: string, name: string): string[] {
  const start = source.indexOf(`export interface ${name} {`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = source.indexOf('\n}\n', start);
  const body = source.slice(start, end);
  return [...body.matchAll(/^ {2}(?:readonly )?([A-Za-z]+)\??:/gm)].map((m) => m[1] as string);
}

test('the README documents every option of Agent.create, each with its default', () => {
  const readme = read('../README.md');
  const names = optionNames(read('../src/agent.ts'), 'AgentOptions');
  expect(names.length).toBeGreaterThan(20);
  for (const name of names) {
    const heading = `### \`${name}\``;
    const at = readme.indexOf(heading);
    expect(at, `README has no section ${heading}`).toBeGreaterThanOrEqual(0);
    const next = readme.indexOf('\n#', at + heading.length);
    const section = readme.slice(at, next === -1 ? undefined : next);
    expect(/Default|\(required\)/.test(section), `${heading} says no default`).toBe(true);
  }
});

test('the README documents every option of AgentHost.create, each with its default', () => {
  const readme = read('../README.md');
  const at = readme.indexOf('### `AgentHost.create` options');
  const section = readme.slice(at, readme.indexOf('\n#', at + 5));
  for (const name of optionNames(read('../src/host.ts'), 'AgentHostOptions')) {
    const line = section.split('\n- ').find((l) => l.startsWith(`\`${name}\``));
    expect(line, `no entry for ${name}`).toBeDefined();
    expect(line).toContain('Default');
  }
});

test('the README opens with the runnable example, as examples/hello.ts has it', () => {
  const readme = read('../README.md');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  expect(readme.indexOf('```ts')).toBeLessThan(readme.indexOf('\n## '));
  const example = read('../examples/hello.ts');
  const body = (text: string) =>
    text
      .split('\n')
      .filter((l) => !l.startsWith('//'))
      .join('\n')
      .trim();
  expect(body(block)).toBe(body(example));
});
