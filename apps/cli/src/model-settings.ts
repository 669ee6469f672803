import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import { CliError } from './io';

export type Provider = 'openai' | 'anthropic';

/** Model flags of `wave chat` / `wave run`. */
export interface ModelFlags {
  provider?: string;
  baseUrl?: string;
  model?: string;
}

/** The `model` section of `<home>/settings.json`. */
export interface ModelFileSettings {
  provider?: string;
  baseURL?: string;
  model?: string;
  /** Read when the user wrote it; wave never writes a key here. */
  apiKey?: string;
}

/** Where a resolved value came from. */
export type SettingOrigin = 'flag' | 'env' | 'settings' | 'default';

/** A model the agent can be given. */
export interface ModelSettings {
  provider: Provider;
  baseURL: string;
  model: string;
  apiKey?: string;
  origin: { provider: SettingOrigin; baseURL: SettingOrigin; model: SettingOrigin; apiKey?: SettingOrigin };
}

export const DEFAULT_BASE_URL: Record<Provider, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/** Used only against the provider's own API (never guessed for a local server). */
export const DEFAULT_MODEL: Record<Provider, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-sonnet-4-5',
};

export function settingsPath(home: string): string {
  return join(home, 'settings.json');
}

export const HOW_TO_CONFIGURE = [
  'No model is configured. Point wave at one of:',
  '  a local Ollama:      wave chat --base-url http://localhost:11434/v1 --model llama3.1',
  '  OpenAI:              export OPENAI_API_KEY=sk-...   (model: --model or WAVE_MODEL, default gpt-4o-mini)',
  '  Anthropic:           export ANTHROPIC_API_KEY=sk-ant-...',
  '  any OpenAI-compatible server: --base-url <url ending in /v1> --model <id>  (or OPENAI_BASE_URL)',
  'Or keep it in <home>/settings.json: { "model": { "provider": "openai", "baseURL": "http://localhost:11434/v1", "model": "llama3.1" } }',
].join('\n');

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

function parseProvider(value: string, where: string): Provider {
  if (value === 'openai' || value === 'anthropic') return value;
  throw new CliError(
    `${where}: the provider must be "openai" (any OpenAI-compatible server) or "anthropic", not ${JSON.stringify(value)}.`,
    2,
  );
}

/**
 * Decide the model from flags, then the environment, then settings.json.
 * Throws a usage error (exit 2) that says how to configure one. Pure.
 *
 * Provider: `--provider`; `--base-url` means openai; `WAVE_PROVIDER`;
 * settings' provider; then inferred from the keys in the environment
 * (`OPENAI_BASE_URL` / `OPENAI_API_KEY` -> openai, `ANTHROPIC_API_KEY` -> anthropic).
 */
export function resolveModelSettings(
  flags: ModelFlags,
  env: Readonly<Record<string, string | undefined>>,
  file: ModelFileSettings | undefined,
  fileName = 'settings.json',
): ModelSettings {
  const e = (k: string) => nonEmpty(env[k]);
  let provider: Provider | undefined;
  let providerOrigin: SettingOrigin = 'flag';
  if (nonEmpty(flags.provider)) provider = parseProvider(flags.provider as string, '--provider');
  else if (nonEmpty(flags.baseUrl)) provider = 'openai';
  else if (e('WAVE_PROVIDER')) {
    provider = parseProvider(e('WAVE_PROVIDER') as string, 'WAVE_PROVIDER');
    providerOrigin = 'env';
  } else if (nonEmpty(file?.provider)) {
    provider = parseProvider(file?.provider as string, `${fileName} (model.provider)`);
    providerOrigin = 'settings';
  } else if (e('OPENAI_BASE_URL') || e('OPENAI_API_KEY')) {
    provider = 'openai';
    providerOrigin = 'env';
  } else if (e('ANTHROPIC_API_KEY')) {
    provider = 'anthropic';
    providerOrigin = 'env';
  } else if (nonEmpty(file?.baseURL)) {
    provider = 'openai';
    providerOrigin = 'settings';
  }
  if (provider === undefined) throw new CliError(HOW_TO_CONFIGURE, 2);

  const envBase = provider === 'openai' ? e('OPENAI_BASE_URL') : e('ANTHROPIC_BASE_URL');
  let baseURL: string;
  let baseOrigin: SettingOrigin;
  if (nonEmpty(flags.baseUrl)) [baseURL, baseOrigin] = [flags.baseUrl as string, 'flag'];
  else if (envBase) [baseURL, baseOrigin] = [envBase, 'env'];
  else if (nonEmpty(file?.baseURL)) [baseURL, baseOrigin] = [file?.baseURL as string, 'settings'];
  else [baseURL, baseOrigin] = [DEFAULT_BASE_URL[provider], 'default'];
  try {
    const u = new URL(baseURL);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new CliError(
      `The model base URL ${JSON.stringify(baseURL)} (from ${baseOrigin === 'flag' ? '--base-url' : baseOrigin === 'env' ? 'the environment' : fileName}) is not an http(s) URL, e.g. http://localhost:11434/v1.`,
      2,
    );
  }
  const official = baseURL.replace(/\/+$/, '') === DEFAULT_BASE_URL[provider];

  let model: string;
  let modelOrigin: SettingOrigin;
  if (nonEmpty(flags.model)) [model, modelOrigin] = [flags.model as string, 'flag'];
  else if (e('WAVE_MODEL')) [model, modelOrigin] = [e('WAVE_MODEL') as string, 'env'];
  else if (nonEmpty(file?.model)) [model, modelOrigin] = [file?.model as string, 'settings'];
  else if (official) [model, modelOrigin] = [DEFAULT_MODEL[provider], 'default'];
  else
    throw new CliError(
      `Which model should ${baseURL} run? Name it with --model (e.g. --model llama3.1), WAVE_MODEL, or "model" in ${fileName}.`,
      2,
    );

  const envKey = provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
  let apiKey: string | undefined;
  let keyOrigin: SettingOrigin | undefined;
  if (e(envKey)) [apiKey, keyOrigin] = [e(envKey), 'env'];
  else if (nonEmpty(file?.apiKey)) [apiKey, keyOrigin] = [file?.apiKey, 'settings'];
  if (apiKey === undefined && (provider === 'anthropic' || official)) {
    throw new CliError(
      `${provider === 'anthropic' ? 'Anthropic' : 'OpenAI'} needs an API key: export ${envKey}=... (or use a local server: --base-url http://localhost:11434/v1 --model llama3.1).`,
      2,
    );
  }
  const out: ModelSettings = {
    provider,
    baseURL,
    model,
    origin: { provider: providerOrigin, baseURL: baseOrigin, model: modelOrigin },
  };
  if (apiKey !== undefined) {
    out.apiKey = apiKey;
    if (keyOrigin) out.origin.apiKey = keyOrigin;
  }
  return out;
}

/** Read the `model` section of `<home>/settings.json` (JSONC). Missing file: undefined. Malformed: usage error. */
export async function readModelFileSettings(home: string): Promise<ModelFileSettings | undefined> {
  const file = settingsPath(home);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`Cannot read ${file}: ${(err as Error).message}`, 2);
  }
  const errors: ParseError[] = [];
  const data = parse(text, errors, { allowTrailingComma: true }) as unknown;
  if (errors.length > 0) {
    const first = errors[0] as ParseError;
    throw new CliError(
      `${file} is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}).`,
      2,
    );
  }
  if (data === undefined || data === null) return undefined;
  if (typeof data !== 'object' || Array.isArray(data))
    throw new CliError(`${file} must hold a JSON object.`, 2);
  const model = (data as { model?: unknown }).model;
  if (model === undefined) return undefined;
  if (typeof model !== 'object' || model === null || Array.isArray(model)) {
    throw new CliError(
      `${file}: "model" must be an object like { "provider": "openai", "baseURL": "...", "model": "..." }.`,
      2,
    );
  }
  const out: ModelFileSettings = {};
  for (const key of ['provider', 'baseURL', 'model', 'apiKey'] as const) {
    const v = (model as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new CliError(`${file}: "model.${key}" must be a string.`, 2);
    out[key] = v;
  }
  return out;
}
