import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { CliError } from '../src/io';
import {
  type ModelFileSettings,
  type ModelFlags,
  readModelFileSettings,
  resolveModelSettings,
} from '../src/model-settings';

type Row = {
  name: string;
  flags?: ModelFlags;
  env?: Record<string, string>;
  file?: ModelFileSettings;
  want: Record<string, unknown>;
};

const rows: Row[] = [
  {
    name: 'a local Ollama from flags needs no key',
    flags: { baseUrl: 'http://localhost:11434/v1', model: 'llama3.1' },
    want: { provider: 'openai', baseURL: 'http://localhost:11434/v1', model: 'llama3.1' },
  },
  {
    name: 'OPENAI_API_KEY alone: OpenAI with its default model',
    env: { OPENAI_API_KEY: 'sk-1' },
    want: { provider: 'openai', baseURL: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKey: 'sk-1' },
  },
  {
    name: 'ANTHROPIC_API_KEY alone: Anthropic',
    env: { ANTHROPIC_API_KEY: 'sk-ant' },
    want: { provider: 'anthropic', baseURL: 'https://api.anthropic.com', apiKey: 'sk-ant' },
  },
  {
    name: 'flags beat the environment, which beats settings.json',
    flags: { model: 'from-flag' },
    env: { OPENAI_BASE_URL: 'http://env:1/v1', WAVE_MODEL: 'from-env' },
    file: { provider: 'openai', baseURL: 'http://file:1/v1', model: 'from-file' },
    want: {
      baseURL: 'http://env:1/v1',
      model: 'from-flag',
      origin: { provider: 'settings', baseURL: 'env', model: 'flag' },
    },
  },
  {
    name: 'settings.json alone',
    file: { provider: 'openai', baseURL: 'http://file:1/v1', model: 'from-file' },
    want: {
      baseURL: 'http://file:1/v1',
      model: 'from-file',
      origin: { provider: 'settings', baseURL: 'settings', model: 'settings' },
    },
  },
  {
    name: "settings' provider wins over a key that only hints at another provider",
    env: { OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'sk-ant' },
    file: { provider: 'anthropic' },
    want: { provider: 'anthropic', apiKey: 'sk-ant' },
  },
  {
    name: '--provider anthropic with --base-url',
    flags: { provider: 'anthropic', baseUrl: 'http://127.0.0.1:9/', model: 'c' },
    env: { ANTHROPIC_API_KEY: 'k' },
    want: { provider: 'anthropic', baseURL: 'http://127.0.0.1:9/', model: 'c' },
  },
  {
    name: 'a key the user wrote in settings.json is used',
    file: { provider: 'anthropic', apiKey: 'from-file', model: 'm' },
    want: { apiKey: 'from-file', origin: { apiKey: 'settings' } },
  },
];

describe('resolveModelSettings', () => {
  it.each(rows)('$name', ({ flags = {}, env = {}, file, want }) => {
    const got = resolveModelSettings(flags, env, file);
    expect(got).toMatchObject(want);
    if (!env.OPENAI_API_KEY && !env.ANTHROPIC_API_KEY && !file?.apiKey)
      expect(got).not.toHaveProperty('apiKey');
  });

  const usage: {
    name: string;
    flags?: ModelFlags;
    env?: Record<string, string>;
    file?: ModelFileSettings;
    message: RegExp;
  }[] = [
    {
      name: 'nothing configured says how (a local Ollama)',
      message: /--base-url http:\/\/localhost:11434\/v1 --model llama3\.1/,
    },
    { name: 'empty values count as unset', env: { OPENAI_API_KEY: ' ' }, message: /No model is configured/ },
    {
      name: 'a custom server needs a model name',
      flags: { baseUrl: 'http://localhost:11434/v1' },
      message: /--model/,
    },
    { name: 'Anthropic needs a key', flags: { provider: 'anthropic' }, message: /ANTHROPIC_API_KEY/ },
    { name: 'OpenAI itself needs a key', flags: { provider: 'openai' }, message: /OPENAI_API_KEY/ },
    { name: 'an unknown provider', env: { WAVE_PROVIDER: 'gemini' }, message: /"openai".*"anthropic"/ },
    {
      name: 'a base URL that is not http',
      flags: { baseUrl: 'ftp://x', model: 'm' },
      message: /not an http\(s\) URL/,
    },
  ];
  it.each(usage)('usage error (exit 2): $name', ({ flags = {}, env = {}, file, message }) => {
    let error: unknown;
    try {
      resolveModelSettings(flags, env, file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toMatch(message);
  });
});

describe('readModelFileSettings', () => {
  it('reads JSONC, ignores a missing file, refuses malformed ones with the path', async () => {
    const home = tempDir('wave-settings-');
    expect(await readModelFileSettings(home)).toBeUndefined();
    await writeFile(
      join(home, 'settings.json'),
      '{ // mine\n "model": { "provider": "openai", "baseURL": "http://h/v1", "model": "m", },\n "other": 1 }',
    );
    expect(await readModelFileSettings(home)).toEqual({
      provider: 'openai',
      baseURL: 'http://h/v1',
      model: 'm',
    });
    await writeFile(join(home, 'settings.json'), '{ "model": ');
    await expect(readModelFileSettings(home)).rejects.toThrow(join(home, 'settings.json'));
    await writeFile(join(home, 'settings.json'), '{ "model": { "model": 3 } }');
    await expect(readModelFileSettings(home)).rejects.toThrow('"model.model" must be a string');
  });
});
