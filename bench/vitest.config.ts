import { waveVitestConfig } from '../vitest.shared.ts';

export default waveVitestConfig();
