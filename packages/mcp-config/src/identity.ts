/**
 * The tool-identity form of a server name, as used in `mcp__<server>__<tool>`:
 * every character outside `[A-Za-z0-9_-]` becomes `_`, and runs of `_` are
 * folded to one so the `__` separators stay unambiguous. Pure; the agent, the
 * CLI and permission rules all use this one function.
 *
 * @example serverIdentity('awslabs.aws-documentation-mcp-server') // 'awslabs_aws-documentation-mcp-server'
 */
export function serverIdentity(name: string): string {
  let out = '';
  let lastUnderscore = false;
  for (const ch of name) {
    const ok = /[A-Za-z0-9-]/.test(ch);
    if (ok) {
      out += ch;
      lastUnderscore = false;
    } else if (!lastUnderscore) {
      out += '_';
      lastUnderscore = true;
    }
  }
  return out;
}
