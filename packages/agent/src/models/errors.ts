/** Stable codes of {@link ModelError}. */
export type ModelErrorCode =
  /** The adapter options are unusable (no model, a bad baseURL, no API key where one is required). */
  | 'MODEL_CONFIG'
  /** The provider refused the credentials (401/403). */
  | 'MODEL_AUTH'
  /** 429, still rate limited after every retry (or asked to wait longer than allowed). */
  | 'MODEL_RATE_LIMIT'
  /** The prompt does not fit the model's context window. */
  | 'MODEL_CONTEXT_LENGTH'
  /** Any other non-2xx status (4xx, or 5xx after every retry). */
  | 'MODEL_HTTP'
  /** The provider could not be reached, or the connection broke. */
  | 'MODEL_NETWORK'
  /** No data arrived for `idleTimeoutMs` (the server stalled). */
  | 'MODEL_TIMEOUT'
  /** The provider reported an error inside a stream that had started. */
  | 'MODEL_STREAM'
  /** The response could not be understood (bad JSON, bad SSE, missing fields). */
  | 'MODEL_BAD_RESPONSE'
  /** The request's `signal` was aborted. */
  | 'MODEL_ABORTED';

/** Details carried by a {@link ModelError}. */
export interface ModelErrorDetails {
  /** The adapter name, e.g. `openai-compatible:gpt-4o-mini`. */
  model?: string;
  /** HTTP status, when there was one. */
  status?: number;
  /** The provider's request id (`x-request-id` / `request-id`), for support tickets. */
  requestId?: string;
  /** How many HTTP attempts were made. */
  attempts?: number;
  cause?: unknown;
}

/** Every failure of a model adapter: a stable `code` and a message saying what to do. */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly code: ModelErrorCode;
  readonly model: string | undefined;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly attempts: number | undefined;

  constructor(code: ModelErrorCode, message: string, details: ModelErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.model = details.model;
    this.status = details.status;
    this.requestId = details.requestId;
    this.attempts = details.attempts;
  }
}

/** True for a {@link ModelError}, optionally of one code. */
export function isModelError(value: unknown, code?: ModelErrorCode): value is ModelError {
  if (!(value instanceof Error) || value.name !== 'ModelError') return false;
  const actual = (value as { code?: unknown }).code;
  return typeof actual === 'string' && (code === undefined || actual === code);
}

/** Replaces every occurrence of `secret` in `text` (so a provider echoing the key never prints it). */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('***');
}
