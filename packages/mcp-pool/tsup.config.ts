import { waveTsupConfig } from '../../tsup.shared.ts';

export default waveTsupConfig();
