import { describe, expect, it } from 'vitest';
import { lifecycleOf, POOL_DEFAULTS, resolveSettings } from '../src/options';
import { server } from './helpers';

describe('pool defaults: one owner', () => {
  it('resolveSettings({}) gives exactly POOL_DEFAULTS', () => {
    const { lifecycle: _lifecycle, ...settings } = POOL_DEFAULTS;
    expect(resolveSettings({})).toEqual(settings);
  });

  it('values that are not numbers or are below the minimum fall back to the default', () => {
    const r = resolveSettings({
      timeouts: { callMs: Number.NaN, idleMs: -1 },
      limits: { maxConnections: 0 },
    });
    expect([r.callMs, r.idleMs, r.maxConnections]).toEqual([
      POOL_DEFAULTS.callMs,
      POOL_DEFAULTS.idleMs,
      POOL_DEFAULTS.maxConnections,
    ]);
  });

  it('a server without lifecycle is lazy; a configured one is kept', () => {
    expect(lifecycleOf(server('a'))).toBe('lazy');
    expect(lifecycleOf(server('b', { lifecycle: 'eager' }))).toBe('eager');
  });
});
