import { waveTsupConfig } from '../../tsup.shared.ts';

// fixturePath/realServer use import.meta.url; shim it in the CJS build.
export default waveTsupConfig({ shims: true });
