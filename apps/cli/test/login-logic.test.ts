import { describe, expect, it } from 'vitest';
import { browserCommand, isPastedRedirect } from '../src/commands/auth';

const auth = 'http://127.0.0.1:4000/authorize?response_type=code&state=s123&code_challenge=x';

describe('wave mcp login: pure parts', () => {
  it('browserCommand: WAVE_BROWSER wins; macOS and Windows always; Linux only with a display', () => {
    const url = 'https://as.example/authorize?a=1&b=2';
    expect(browserCommand(url, { WAVE_BROWSER: '/bin/b' }, 'linux')).toEqual({
      command: '/bin/b',
      args: [url],
    });
    expect(browserCommand(url, { WAVE_BROWSER: 'none', DISPLAY: ':0' }, 'linux')).toBeUndefined();
    expect(browserCommand(url, {}, 'darwin')).toEqual({ command: 'open', args: [url] });
    expect(browserCommand(url, {}, 'win32')).toEqual({
      command: 'rundll32',
      args: ['url.dll,FileProtocolHandler', url],
    });
    expect(browserCommand(url, {}, 'linux')).toBeUndefined();
    expect(browserCommand(url, { DISPLAY: ':0' }, 'linux')).toEqual({ command: 'xdg-open', args: [url] });
    expect(browserCommand(url, { WAYLAND_DISPLAY: 'wayland-0' }, 'linux')?.command).toBe('xdg-open');
  });

  it('isPastedRedirect: the whole URL or its query, with this request state and a code or an error', () => {
    expect(isPastedRedirect('http://127.0.0.1:5000/callback?code=c&state=s123', auth)).toBe(true);
    expect(isPastedRedirect('  ?code=c&state=s123  ', auth)).toBe(true);
    expect(isPastedRedirect('code=c&state=s123', auth)).toBe(true);
    expect(isPastedRedirect('http://127.0.0.1:5000/callback?error=access_denied&state=s123', auth)).toBe(
      true,
    );
    expect(isPastedRedirect('http://127.0.0.1:5000/callback?code=c&state=other', auth)).toBe(false);
    expect(isPastedRedirect('http://127.0.0.1:5000/callback?state=s123', auth)).toBe(false);
    expect(isPastedRedirect('hello', auth)).toBe(false);
  });
});
