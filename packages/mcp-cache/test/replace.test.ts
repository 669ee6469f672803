import { describeAtomicReplace } from '@wave/testkit/vitest';
import { nodeCacheFs } from '../src/fs';
import { replaceFileAtomic } from '../src/replace';

describeAtomicReplace(
  'mcp-cache replaceFileAtomic',
  (file, text) => replaceFileAtomic(nodeCacheFs(), file, text, { fsync: false, now: Date.now }),
  { directoryInTheWay: 'moved-aside' },
);
