import { waveVitestConfig } from '../../vitest.shared.ts';

export default waveVitestConfig({ globalSetup: './test/build-bin.ts', testTimeout: 90_000 });
