import { maskArgs, type ResolvedServer, referencedVariables } from '@wave/mcp-config';

/** Environment variable names that hold secrets by convention. */
const SECRET_NAME = /(^|_)(TOKEN|KEY|SECRET|PASSWORD|PASSWD|PAT|CREDENTIALS?)$|^(PASSWORD|API_?KEY)$/i;
/** Header names that carry credentials. */
const SECRET_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|x-auth-token|cookie)$/i;
const REFERENCE_ONLY = /^(\s*(Bearer|Basic|Token)\s+)?(\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}\s*)+$/;

/** A literal secret about to be written into a file. */
export interface SecretFinding {
  kind: 'env' | 'header' | 'url' | 'arg';
  key: string;
}

function isLiteral(value: string): boolean {
  return value !== '' && !REFERENCE_ONLY.test(value);
}

/**
 * Literal secrets in a server definition: values of secret-looking env names
 * and credential headers that are not `${VAR}` references, a password in
 * the URL, and credential arguments ({@link maskArgs}). Pure.
 */
export function findLiteralSecrets(config: {
  env?: Record<string, string>;
  headers?: Record<string, string>;
  url?: string;
  args?: unknown;
}): SecretFinding[] {
  const out: SecretFinding[] = [];
  if (Array.isArray(config.args) && config.args.every((a) => typeof a === 'string')) {
    const args = config.args as string[];
    const masked = maskArgs(args);
    args.forEach((a, i) => {
      if (masked[i] !== a) out.push({ kind: 'arg', key: String(masked[i]) });
    });
  }
  for (const [k, v] of Object.entries(config.env ?? {})) {
    if (SECRET_NAME.test(k) && isLiteral(v)) out.push({ kind: 'env', key: k });
  }
  for (const [k, v] of Object.entries(config.headers ?? {})) {
    if (SECRET_HEADER.test(k) && isLiteral(v)) out.push({ kind: 'header', key: k });
  }
  if (config.url !== undefined) {
    const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*)@/i.exec(config.url);
    if (m?.[1]?.includes(':') && isLiteral(m[1].slice(m[1].indexOf(':') + 1)))
      out.push({ kind: 'url', key: 'password' });
  }
  return out;
}

/** Is an env or header name one whose value a user would not want shown or shared? Pure. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || SECRET_HEADER.test(name);
}

const MIN_SECRET_LENGTH = 4;

/**
 * The secret values a server receives, as expanded for this run: values of
 * secret-looking variables it references, of its secret-looking env entries
 * and credential headers, the password and secret query values of its URL,
 * and the values of credential flags in its arguments. Error messages and
 * stderr lines are cleaned of them with {@link redact}. Pure.
 */
export function secretValues(server: ResolvedServer, env: NodeJS.ProcessEnv): string[] {
  const found = new Set<string>();
  const add = (v: string | undefined) => {
    // A reference left unexpanded (its variable is not set) is no secret: it names the variable to set.
    if (v !== undefined && v.length >= MIN_SECRET_LENGTH && !REFERENCE_ONLY.test(v)) found.add(v);
  };
  const raw = server.raw ?? server.config;
  const texts = [
    raw.command,
    raw.url,
    raw.cwd,
    ...(raw.args ?? []),
    ...Object.values(raw.env ?? {}),
    ...Object.values(raw.headers ?? {}),
  ];
  for (const t of texts) {
    if (typeof t !== 'string') continue;
    for (const name of referencedVariables(t)) if (isSecretName(name)) add(env[name]);
  }
  for (const [k, v] of Object.entries(raw.headers ?? {}))
    if (SECRET_HEADER.test(k)) for (const name of referencedVariables(v)) add(env[name]);
  const cfg = server.config;
  for (const [k, v] of Object.entries(cfg.env ?? {})) if (SECRET_NAME.test(k)) add(v);
  for (const [k, v] of Object.entries(cfg.headers ?? {})) {
    if (!SECRET_HEADER.test(k)) continue;
    add(v);
    add(v.replace(/^\s*(Bearer|Basic|Token|Bot|Digest|ApiKey)\s+/i, ''));
  }
  if (cfg.url !== undefined) {
    try {
      const u = new URL(cfg.url);
      add(decodeURIComponent(u.password));
      add(u.password);
      if (u.username && !u.password) add(u.username);
      for (const [k, v] of u.searchParams) if (SECRET_PARAM.test(k)) add(v);
    } catch {
      // not a URL: nothing to take from it
    }
  }
  const args = cfg.args ?? [];
  const masked = maskArgs(args);
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (masked[i] === a) continue;
    const eq = a.indexOf('=');
    const colon = a.indexOf(':');
    add(a);
    if (eq > 0) add(a.slice(eq + 1));
    if (colon > 0) add(a.slice(colon + 1).trim());
  }
  return [...found].sort((a, b) => b.length - a.length);
}

const SECRET_PARAM = /token|key|secret|pass|pwd|auth|sig|credential|session|code/i;

/** `text` with every one of `secrets` replaced by `****`. Pure. */
export function redact(text: string, secrets: readonly string[]): string;
export function redact(text: string | undefined, secrets: readonly string[]): string | undefined;
export function redact(text: string | undefined, secrets: readonly string[]): string | undefined {
  if (text === undefined) return undefined;
  let out = text;
  for (const s of secrets) out = out.split(s).join('****');
  return out;
}
