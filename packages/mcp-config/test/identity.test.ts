import { describe, expect, it } from 'vitest';
import { serverIdentity } from '../src/identity';

describe('serverIdentity', () => {
  it.each([
    ['github', 'github'],
    ['my-server_1', 'my-server_1'],
    ['awslabs.aws-documentation-mcp-server', 'awslabs_aws-documentation-mcp-server'],
    ['My Server', 'My_Server'],
    ['a__b', 'a_b'],
    ['a. b', 'a_b'],
    ['ünïcode', '_n_code'],
    ['', ''],
  ])('%j -> %j', (name, id) => {
    expect(serverIdentity(name)).toBe(id);
    expect(serverIdentity(name)).not.toContain('__');
  });
});
