import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectConfigPath, resolveHome, userConfigPath } from '../src/paths';

describe('resolveHome', () => {
  it.each([
    ['home option wins', { home: '/opt/h', env: { WAVE_HOME: '/env/h' } }, '/opt/h'],
    ['WAVE_HOME next', { env: { WAVE_HOME: '/env/h' } }, '/env/h'],
    ['empty WAVE_HOME ignored', { env: { WAVE_HOME: '' } }, join(homedir(), '.wave')],
    ['empty home option ignored', { home: '', env: { WAVE_HOME: '/env/h' } }, '/env/h'],
    ['default ~/.wave', { env: {} }, join(homedir(), '.wave')],
    ['~ expanded', { home: '~/wh' }, join(homedir(), 'wh')],
    ['~ in WAVE_HOME expanded', { env: { WAVE_HOME: '~/wh2' } }, join(homedir(), 'wh2')],
    ['relative made absolute', { home: 'rel/h' }, resolve('rel/h')],
  ])('%s', (_label, options, expected) => {
    expect(resolveHome(options)).toBe(expected);
  });

  it('reads process.env when no env is given', () => {
    const before = process.env.WAVE_HOME;
    process.env.WAVE_HOME = '/from/process';
    try {
      expect(resolveHome()).toBe('/from/process');
    } finally {
      if (before === undefined) delete process.env.WAVE_HOME;
      else process.env.WAVE_HOME = before;
    }
  });

  it('builds the two config paths', () => {
    expect(userConfigPath('/h')).toBe('/h/mcp.json');
    expect(projectConfigPath('/w/p')).toBe('/w/p/.mcp.json');
  });
});
