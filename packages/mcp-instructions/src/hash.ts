/** Prefix naming the algorithm, so a future change of algorithm cannot collide. */
export const HASH_PREFIX = 'fnv1a64:';

/**
 * A stable hash of an instructions text: 64-bit FNV-1a over the text's UTF-8
 * bytes (a lone surrogate is encoded as U+FFFD, as `TextEncoder` does),
 * written as `fnv1a64:` and 16 lowercase hex digits.
 *
 * Pure JavaScript (no `node:crypto`), so it gives the same value in Node and
 * in browsers. It is not a cryptographic hash: it only tells "same text" from
 * "changed text". Always hash the full, untruncated text.
 */
export function hashInstructions(text: string): string {
  // 64-bit state in four 16-bit limbs (v0 lowest); offset basis 0xcbf29ce484222325.
  let v0 = 0x2325;
  let v1 = 0x8422;
  let v2 = 0x9ce4;
  let v3 = 0xcbf2;
  const length = text.length;

  // Multiply by the FNV prime 0x100000001b3 = 2^40 + 0x1b3 (mod 2^64) after
  // xoring one byte into the low limb.
  const mix = (byte: number): void => {
    v0 ^= byte;
    const t0 = v0 * 0x1b3;
    let t1 = v1 * 0x1b3;
    let t2 = v2 * 0x1b3 + (v0 << 8);
    const t3 = v3 * 0x1b3 + (v1 << 8);
    t1 += t0 >>> 16;
    v0 = t0 & 0xffff;
    t2 += t1 >>> 16;
    v1 = t1 & 0xffff;
    v3 = (t3 + (t2 >>> 16)) & 0xffff;
    v2 = t2 & 0xffff;
  };

  for (let i = 0; i < length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      mix(code);
      continue;
    }
    if (code < 0x800) {
      mix(0xc0 | (code >> 6));
      mix(0x80 | (code & 0x3f));
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < length ? text.charCodeAt(i + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
        mix(0xf0 | (point >> 18));
        mix(0x80 | ((point >> 12) & 0x3f));
        mix(0x80 | ((point >> 6) & 0x3f));
        mix(0x80 | (point & 0x3f));
        continue;
      }
      code = 0xfffd; // lone surrogate
    }
    mix(0xe0 | (code >> 12));
    mix(0x80 | ((code >> 6) & 0x3f));
    mix(0x80 | (code & 0x3f));
  }

  return HASH_PREFIX + hex4(v3) + hex4(v2) + hex4(v1) + hex4(v0);
}

function hex4(limb: number): string {
  return limb.toString(16).padStart(4, '0');
}
