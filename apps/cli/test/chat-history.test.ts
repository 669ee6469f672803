import type { Message } from '@wave/agent';
import { describe, expect, it } from 'vitest';
import { CANCELLED_RESULT, closeUnansweredToolCalls } from '../src/chat/history';

const call = (id: string) => ({ id, name: `mcp__s__${id}`, arguments: {} });
const result = (id: string): Message => ({
  role: 'tool',
  toolCallId: id,
  name: `mcp__s__${id}`,
  content: 'ok',
});
const cancelled = (id: string): Message => ({
  role: 'tool',
  toolCallId: id,
  name: `mcp__s__${id}`,
  content: CANCELLED_RESULT,
  isError: true,
});

describe('closeUnansweredToolCalls', () => {
  it.each<[string, Message[], Message[] | undefined]>([
    [
      'nothing to do',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      undefined,
    ],
    [
      'every call answered',
      [
        { role: 'assistant', content: '', toolCalls: [call('a')] },
        result('a'),
        { role: 'assistant', content: 'x' },
      ],
      undefined,
    ],
    [
      'the last turn was cancelled while its tools ran',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] },
      ],
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] },
        cancelled('a'),
        cancelled('b'),
      ],
    ],
    [
      'one of two answered, then a new user message',
      [
        { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] },
        result('a'),
        { role: 'user', content: 'next' },
      ],
      [
        { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] },
        result('a'),
        cancelled('b'),
        { role: 'user', content: 'next' },
      ],
    ],
  ])('%s', (_name, input, want) => {
    expect(closeUnansweredToolCalls(input)).toEqual(want);
  });
});
