import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult, OutputGuard } from './funnel';
import type { ContentBlock } from './model';

/**
 * The plain conversion of an MCP result to model content, with no size limits:
 * text blocks joined, images as image blocks when the model has vision, else
 * saved under `dir` and named in the text, other blocks as JSON.
 */
export function basicOutputGuard(opts: { dir: string }): OutputGuard {
  return {
    startTurn() {},
    async guard(result: CallToolResult, ctx) {
      const blocks: ContentBlock[] = [];
      const content = Array.isArray(result.content) ? result.content : [];
      for (const block of content) {
        const b = block as { type?: string; text?: string; data?: string; mimeType?: string };
        if (b.type === 'text' && typeof b.text === 'string') blocks.push({ type: 'text', text: b.text });
        else if (b.type === 'image' && typeof b.data === 'string') {
          const mimeType = b.mimeType ?? 'image/png';
          if (ctx.supportsVision) blocks.push({ type: 'image', mimeType, data: b.data });
          else {
            await mkdir(opts.dir, { recursive: true });
            const ext = mimeType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') || 'bin';
            const file = join(opts.dir, `image-${randomUUID().slice(0, 8)}.${ext}`);
            await writeFile(file, Buffer.from(b.data, 'base64'));
            blocks.push({
              type: 'text',
              text: `[image (${mimeType}) saved to ${file}; this model cannot view images]`,
            });
          }
        } else blocks.push({ type: 'text', text: JSON.stringify(block) });
      }
      if (result.structuredContent !== undefined && blocks.length === 0) {
        blocks.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
      }
      const isError = result.isError === true;
      if (blocks.every((b) => b.type === 'text')) {
        return { content: blocks.map((b) => (b as { text: string }).text).join('\n'), isError };
      }
      return { content: blocks, isError };
    },
  };
}
