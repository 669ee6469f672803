/**
 * `@wave/agent/search`: the tool search shared by Exec's
 * `tools["$codemode"].search` and the gateway's `search` action. Pure and
 * offline; usable by any framework on its own.
 */
export {
  createToolSearchIndex,
  type SearchableTool,
  searchTools,
  type ToolSearchIndex,
  type ToolSearchOptions,
} from './exposure/search';
