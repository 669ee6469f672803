import { waveTsupConfig } from '../../tsup.shared.ts';

export default waveTsupConfig({
  entry: ['src/index.ts', 'src/testing.ts', 'src/search.ts', 'src/exec.ts'],
});
