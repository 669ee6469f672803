// Run from the repository root: pnpm --filter @wave/agent example
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '@wave/agent';
import { scriptedModel } from '@wave/agent/testing';
import { fixtureServer } from '@wave/testkit';

const root = mkdtempSync(join(tmpdir(), 'wave-example-'));
const agent = await Agent.create({
  workdir: root,
  home: join(root, 'home'), // keeps the example away from ~/.wave
  model: scriptedModel([
    { toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'Hello from MCP!' } }] },
    (request) => ({ text: `The tool answered: ${JSON.stringify(request.messages.at(-1)?.content)}` }),
  ]),
  mcpServers: { hello: fixtureServer('hello') }, // { command: node, args: [.../hello.mjs] }
  toolMode: 'flat',
  permissions: { allow: ['mcp__hello__echo'] },
});

console.log(agent.getMcpServers()[0]?.status); // "disconnected": create started nothing
const result = await agent.sendMessage('Say hello through the echo tool.');
console.log(result.text); // The tool answered: "Hello from MCP!"
console.log(agent.getMcpServers()[0]?.status); // "connected"
await agent.destroy(); // the server's whole process tree is gone
rmSync(root, { recursive: true, force: true });
