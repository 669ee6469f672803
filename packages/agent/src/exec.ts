// `@wave/agent/exec`: the Exec sandbox and its catalog, usable without the agent.
export type { CatalogOptions, CatalogTool, SignatureOptions } from './exposure/catalog';
export { renderCatalog, renderSignature, toolAccess } from './exposure/catalog';
export { EXEC_TOOL_NAME, execDeclaration } from './exposure/exec/declaration';
export type { ImagePlaceholder, NestedToolResult } from './exposure/exec/result';
export type {
  ExecFailureCode,
  ExecHost,
  ExecResult,
  ExecRunOptions,
  ExecSandbox,
  ExecSandboxOptions,
} from './exposure/exec/sandbox';
export { createExecSandbox } from './exposure/exec/sandbox';
