import { waveVitestConfig } from '../../../../vitest.shared';

export default waveVitestConfig({ include: ['*.leaky.ts'] });
