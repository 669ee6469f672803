import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { followAuthorizationRedirect, type OAuthFixture, startOAuthFixture } from '@wave/testkit';
import { afterEach, describe, expect, test } from 'vitest';
import { textOf, world } from './helpers';

const fixtures: OAuthFixture[] = [];
afterEach(async () => {
  for (const f of fixtures.splice(0)) await f.close();
});

describe('a remote server that needs sign-in (OAuth)', () => {
  test('its tools are absent and getMcpServers() says why; authorizeMcpServer signs in and brings them', async () => {
    const f = await startOAuthFixture();
    fixtures.push(f);
    const w = await world();
    await writeFile(
      join(w.tmp.home, 'mcp.json'),
      JSON.stringify({ mcpServers: { remote: { type: 'http', url: f.mcpUrl } } }),
    );
    const call = { toolCalls: [{ name: 'mcp__remote__whoami', arguments: {} }] };
    const agent = await w.agent({
      steps: [call, { text: 'first' }, call, { text: 'second' }],
      permissions: { allow: ['mcp__remote__*'] },
    });
    const before = await agent.connectMcpServer('remote');
    expect(before).toMatchObject({ name: 'remote', status: 'needs-auth', toolCount: 0 });
    expect(before.error?.code).toBe('AUTH_REQUIRED');
    expect(before.error?.message).toMatch(/sign in|authorize/i);
    await agent.sendMessage('who am I?');
    const unavailable = textOf(agent.getMessages().find((m) => m.role === 'tool')?.content);
    expect(unavailable).toContain('needs the user to sign in');
    expect(unavailable).toContain('wave mcp login remote');
    expect(f.codeGrants).toBe(0);

    const after = await agent.authorizeMcpServer('remote', {
      openUrl: async (url) => {
        expect(await followAuthorizationRedirect(url)).toBe(200);
      },
    });
    expect(after).toMatchObject({ status: 'connected', toolCount: 1 });
    expect(after.error).toBeUndefined();
    await agent.sendMessage('and now?');
    const results = agent.getMessages().filter((m) => m.role === 'tool');
    expect(results).toHaveLength(2);
    // Tokens never reach the transcript or a server view.
    const everything = JSON.stringify([agent.getMessages(), agent.getMcpServers()]);
    for (const token of [...f.issuedAccessTokens, ...f.issuedRefreshTokens])
      expect(everything).not.toContain(token);
  });
});
