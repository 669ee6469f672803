import { waveVitestConfig } from '../../vitest.shared.ts';

// Every test run gets a temporary wave home (process ledgers), never the real one.
export default waveVitestConfig({ globalSetup: './test/temp-home.setup.ts' });
