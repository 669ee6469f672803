/** Stable codes of {@link PoolWarning}. */
export type PoolWarningCode =
  /** A tool listed by a server cannot be used (its definition is malformed); the server's other tools are kept. */
  | 'TOOL_DROPPED'
  /** The process ledger under the wave home could not be written or swept; connections go on. */
  | 'LEDGER';

/** Something a host may want to show or log; never an error of a call or a connection. */
export interface PoolWarning {
  code: PoolWarningCode;
  /** The server it is about, when there is one. */
  server?: string;
  /** The tool it is about (`TOOL_DROPPED`). */
  tool?: string;
  /** What happened and what to do, naming the server and tool. */
  message: string;
}
