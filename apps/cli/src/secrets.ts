/** Environment variable names that hold secrets by convention. */
const SECRET_NAME = /(^|_)(TOKEN|KEY|SECRET|PASSWORD|PASSWD|PAT|CREDENTIALS?)$|^(PASSWORD|API_?KEY)$/i;
/** Header names that carry credentials. */
const SECRET_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|x-auth-token|cookie)$/i;
const REFERENCE_ONLY = /^(\s*(Bearer|Basic|Token)\s+)?(\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}\s*)+$/;

/** A literal secret about to be written into a file. */
export interface SecretFinding {
  kind: 'env' | 'header' | 'url';
  key: string;
}

function isLiteral(value: string): boolean {
  return value !== '' && !REFERENCE_ONLY.test(value);
}

/**
 * Literal secrets in a server definition: values of secret-looking env names
 * and credential headers that are not `${VAR}` references, and a password in
 * the URL. Pure.
 */
export function findLiteralSecrets(config: {
  env?: Record<string, string>;
  headers?: Record<string, string>;
  url?: string;
}): SecretFinding[] {
  const out: SecretFinding[] = [];
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
