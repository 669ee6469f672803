/**
 * Adversarial config input (shared by the behaviour test and the benchmark):
 * the shapes that made the old backtracking regexes quadratic, sized so the
 * whole file is about `bytes` long.
 */

/** Just under the 4 MiB a config file may have (the JSON syntax around the values takes the rest). */
export const ADVERSARIAL_BYTES = 4 * 1024 * 1024 - 64 * 1024;

/** One string of about `size` characters repeating `unit`. */
function fill(unit: string, size: number): string {
  return unit.repeat(Math.max(1, Math.floor(size / unit.length)));
}

/** The server entries of the adversarial file (each value is ~1/10 of `bytes`). */
export function adversarialServers(bytes = ADVERSARIAL_BYTES): Record<string, unknown> {
  const part = Math.floor(bytes / 10);
  let distinct = '';
  for (let i = 0; distinct.length < part; i++) distinct += `\${V${i}}`;
  return {
    braces: {
      command: 'x',
      args: [fill('${', part), fill('--token=${A:-', part), fill('--token=${A:-x}', part)],
      env: {
        OPEN: fill('${', part),
        DISTINCT: distinct,
        DEFAULTS: fill('${A:-b', part),
        CLOSED: fill('${A:-b}${sk-1}', part),
      },
    },
    remote: {
      url: `https://h/mcp${fill('?', part)}`,
      headers: { Authorization: `Bearer ${fill('${', part)}` },
    },
    userinfo: { url: `https://${fill('a:', part)}@h/x` },
  };
}

/** The file text: `{"mcpServers": ...}`. */
export function adversarialFile(bytes = ADVERSARIAL_BYTES): string {
  return JSON.stringify({ mcpServers: adversarialServers(bytes) });
}
