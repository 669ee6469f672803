import { describeAtomicReplace } from '@wave/testkit/vitest';
import { replaceFile } from '../src/ledger';

describeAtomicReplace('proc-reaper ledger replaceFile', replaceFile);
