import type { ElicitationHandler, ElicitationResponse } from '@wave/mcp-pool';

type Request = Parameters<ElicitationHandler>[1];
type Field = {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  oneOf?: { const?: unknown; title?: string }[];
  items?: { enum?: unknown[] };
};

/**
 * Ask the user for a server's elicitation form, one prompt per field
 * (@clack/prompts): booleans as yes/no, enums as a choice, numbers checked.
 * Esc / Ctrl-C answers `cancel`; choosing "Decline" answers `decline`.
 */
export async function askElicitation(
  server: string,
  request: Request,
  signal: AbortSignal,
  note: (text: string) => void,
): Promise<ElicitationResponse> {
  const p = await import('@clack/prompts');
  note(`The MCP server "${server}" asks: ${request.message}\n`);
  const go = await p.select<'fill' | 'decline'>({
    message: 'Answer it?',
    options: [
      { value: 'fill', label: 'Fill in the form' },
      { value: 'decline', label: 'Decline' },
    ],
    signal,
  });
  if (p.isCancel(go)) return { action: 'cancel' };
  if (go === 'decline') return { action: 'decline' };
  const schema = request.requestedSchema as { properties?: Record<string, Field>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const content: NonNullable<ElicitationResponse['content']> = {};
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    const label = `${field.title ?? key}${field.description ? ` (${field.description})` : ''}${required.has(key) ? '' : ' [optional]'}`;
    const choices = field.enum ?? field.oneOf?.map((o) => o.const);
    let value: unknown;
    if (field.type === 'boolean') {
      value = await p.confirm({
        message: label,
        initialValue: typeof field.default === 'boolean' ? field.default : false,
        signal,
      });
    } else if (choices && choices.length > 0) {
      value = await p.select({
        message: label,
        options: choices.map((c, i) => ({ value: String(c), label: field.oneOf?.[i]?.title ?? String(c) })),
        ...(field.default !== undefined ? { initialValue: String(field.default) } : {}),
        signal,
      });
    } else {
      const numeric = field.type === 'number' || field.type === 'integer';
      const text = await p.text({
        message: label,
        ...(field.default !== undefined ? { initialValue: String(field.default) } : {}),
        validate: (v) => {
          const s = (v ?? '').trim();
          if (s === '') return required.has(key) ? 'This field is required.' : undefined;
          if (!numeric) return undefined;
          const n = Number(s);
          if (!Number.isFinite(n)) return 'Enter a number.';
          if (field.type === 'integer' && !Number.isInteger(n)) return 'Enter a whole number.';
          return undefined;
        },
        signal,
      });
      if (!p.isCancel(text)) {
        const s = text.trim();
        value = s === '' ? undefined : numeric ? Number(s) : s;
      } else value = text;
    }
    if (p.isCancel(value)) return { action: 'cancel' };
    if (value !== undefined) content[key] = value as string | number | boolean;
  }
  return { action: 'accept', content };
}
