import type { PlatformAdapter } from '../types';
import { createDarwinAdapter } from './darwin';
import { createLinuxAdapter } from './linux';
import { createWin32Adapter } from './win32';

/** The adapter for a platform: Linux reads /proc, Windows uses CIM + taskkill, every other POSIX uses `ps`. */
export function defaultAdapter(platform: NodeJS.Platform = process.platform): PlatformAdapter {
  if (platform === 'linux') return createLinuxAdapter();
  if (platform === 'win32') return createWin32Adapter();
  return createDarwinAdapter();
}
