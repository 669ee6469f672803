import { describeAtomicReplace } from '@wave/testkit/vitest';
import { writeFileAtomic } from '../src/atomic-write';
import { nodeConfigFs } from '../src/fs';

describeAtomicReplace('mcp-config writeFileAtomic', (file, text) =>
  writeFileAtomic(nodeConfigFs, file, text, { mode: 0o600 }),
);
