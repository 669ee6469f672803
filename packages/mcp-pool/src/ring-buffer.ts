/**
 * Keeps the last `maxBytes` bytes written to it (a process's stderr), so a
 * chatty server cannot grow memory and a crash report can show its last words.
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;

  /** @param maxBytes how much to keep @default 16384 */
  constructor(private readonly maxBytes = 16_384) {}

  /** Append a chunk, discarding the oldest bytes beyond the limit. */
  push(chunk: Buffer | string): void {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (buf.length === 0) return;
    if (buf.length >= this.maxBytes) {
      this.dropped += this.size + (buf.length - this.maxBytes);
      buf = buf.subarray(buf.length - this.maxBytes);
      this.chunks = [buf];
      this.size = buf.length;
      return;
    }
    this.chunks.push(buf);
    this.size += buf.length;
    while (this.size > this.maxBytes) {
      const head = this.chunks[0]!;
      const excess = this.size - this.maxBytes;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
        this.dropped += head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /** Bytes discarded so far. */
  get droppedBytes(): number {
    return this.dropped;
  }

  /** Everything kept, as UTF-8 text. */
  text(): string {
    return Buffer.concat(this.chunks, this.size).toString('utf8');
  }

  /**
   * The last `maxLines` non-empty lines (at most `maxChars` characters),
   * trimmed; empty string when nothing was written.
   */
  tail(maxLines = 20, maxChars = 2_000): string {
    const lines = this.text()
      .split(/\r?\n/)
      .map((l) => l.trimEnd())
      .filter((l) => l.length > 0);
    let out = lines.slice(-maxLines).join('\n');
    if (out.length > maxChars) out = `...${out.slice(out.length - maxChars)}`;
    return out;
  }
}
