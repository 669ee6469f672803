import { type JSONRPCMessage, McpError } from '@modelcontextprotocol/sdk/types.js';

/** JSON-RPC error code of the reply made up for a response over the line limit (implementation-defined range). */
export const RESPONSE_TOO_LARGE_RPC_CODE = -32_001;

/** `data.reason` of that reply: the pool turns it into a `RESPONSE_TOO_LARGE` error. */
export const RESPONSE_TOO_LARGE = 'RESPONSE_TOO_LARGE';

/** What to do with a stdout line that was too long to read. */
export type OversizeOutcome =
  /** A response: fail its request at once with this made-up error reply; the connection stays up. */
  | { kind: 'reply'; message: JSONRPCMessage }
  /** A notification or a request from the server: dropped; the connection stays up. */
  | { kind: 'ignore' }
  /** Nothing says which request it answered: the connection must end, or that request hangs. */
  | { kind: 'break'; what: string };

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":7,...` (Python SDK order): the id among the first top-level scalar keys. */
const HEAD_ID = new RegExp(
  String.raw`^\s*\{(?:\s*"(?:jsonrpc)"\s*:\s*"[^"]*"\s*,)?\s*"id"\s*:\s*${ID}\s*,\s*"(result|error|method)"`,
);
/** `...,"jsonrpc":"2.0","id":7}` (TypeScript SDK order): the id as the last top-level key. */
const TAIL_ID = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);
/** The line starts like a request or notification from the server. */
const HEAD_METHOD = /^\s*\{\s*"method"\s*:/;
/** The line starts like a response. */
const HEAD_RESPONSE = /^\s*\{\s*"(?:result|error)"\s*:/;

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * Decide what a stdout line over the limit was, from its first and last
 * bytes only (the line itself is never kept). Pure.
 */
export function oversizeLineReply(head: string, tail: string, bytes: number, limit: number): OversizeOutcome {
  let id: string | undefined;
  const h = HEAD_ID.exec(head);
  if (h) {
    if (h[2] === 'method') return { kind: 'ignore' };
    id = h[1];
  } else if (HEAD_METHOD.test(head)) {
    return { kind: 'ignore' };
  } else if (HEAD_RESPONSE.test(head)) {
    id = TAIL_ID.exec(tail)?.[1];
  }
  if (id === undefined) {
    return {
      kind: 'break',
      what: `wrote a line of ${mib(bytes)} on stdout (over the ${mib(limit)} limit) whose request id could not be read`,
    };
  }
  let parsed: string | number;
  try {
    parsed = JSON.parse(id) as string | number;
  } catch {
    return { kind: 'break', what: `wrote a line of ${mib(bytes)} on stdout with an unreadable request id` };
  }
  return {
    kind: 'reply',
    message: {
      jsonrpc: '2.0',
      id: parsed,
      error: {
        code: RESPONSE_TOO_LARGE_RPC_CODE,
        message: `the response is ${mib(bytes)}, over the ${mib(limit)} limit of one message; it was dropped`,
        data: { reason: RESPONSE_TOO_LARGE, bytes, limit },
      },
    },
  };
}

/** Is `err` the SDK's error for a reply made by {@link oversizeLineReply}? */
export function isResponseTooLarge(err: unknown): err is McpError {
  return (
    err instanceof McpError &&
    err.code === RESPONSE_TOO_LARGE_RPC_CODE &&
    (err.data as { reason?: unknown } | undefined)?.reason === RESPONSE_TOO_LARGE
  );
}
