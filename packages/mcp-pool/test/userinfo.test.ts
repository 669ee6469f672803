import { describe, expect, it } from 'vitest';
import { splitUserinfo } from '../src/http-transport';

describe('credentials in a server URL', () => {
  it.each([
    ['https://h.example/mcp', undefined, 'https://h.example/mcp', undefined],
    [
      'https://me:p%40ss@h.example/mcp?x=1',
      undefined,
      'https://h.example/mcp?x=1',
      { Authorization: `Basic ${Buffer.from('me:p@ss').toString('base64')}` },
    ],
    [
      'https://token@h.example/mcp',
      { A: '1' },
      'https://h.example/mcp',
      { A: '1', Authorization: `Basic ${Buffer.from('token:').toString('base64')}` },
    ],
    [
      'https://me:pw@h.example/mcp',
      { authorization: 'Bearer x' },
      'https://h.example/mcp',
      { authorization: 'Bearer x' },
    ],
  ])('%s -> a URL fetch accepts, credentials as a header', (raw, headers, url, expected) => {
    const r = splitUserinfo(raw, headers);
    expect(r.url.href).toBe(url);
    expect(r.headers).toEqual(expected);
    // fetch accepts it (it refuses a URL with credentials).
    expect(() => new Request(r.url)).not.toThrow();
  });

  it('the raw URL is what fetch refuses', () => {
    expect(() => new Request('https://me:pw@h.example/mcp')).toThrow();
  });
});
