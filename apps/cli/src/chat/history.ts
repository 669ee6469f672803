import type { Message, ToolResultMessage } from '@wave/agent';

/** What a tool call that never finished answers in the history. */
export const CANCELLED_RESULT =
  'Cancelled by the user before it finished; it may or may not have had an effect.';

/**
 * A turn cancelled while its tools ran leaves an assistant message whose tool
 * calls have no results, and model APIs refuse such a history. Give every
 * unanswered call a result saying it was cancelled, right after the results
 * it has. Returns undefined when nothing is missing. Pure.
 */
export function closeUnansweredToolCalls(messages: readonly Message[]): Message[] | undefined {
  const out: Message[] = [];
  let changed = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    out.push(m);
    if (m.role !== 'assistant' || !m.toolCalls?.length) continue;
    const answered = new Set<string>();
    while (i + 1 < messages.length && (messages[i + 1] as Message).role === 'tool') {
      const r = messages[i + 1] as ToolResultMessage;
      answered.add(r.toolCallId);
      out.push(r);
      i += 1;
    }
    for (const call of m.toolCalls) {
      if (answered.has(call.id)) continue;
      changed = true;
      out.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: CANCELLED_RESULT,
        isError: true,
      });
    }
  }
  return changed ? out : undefined;
}
