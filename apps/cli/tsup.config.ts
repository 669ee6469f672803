import { waveTsupConfig } from '../../tsup.shared.ts';

/**
 * The `wave` binary: one ESM file. Workspace packages are bundled from their
 * TypeScript source (the `@wave/source` condition) with their npm
 * dependencies; the CLI's own npm dependencies stay external.
 */
export default waveTsupConfig({
  entry: { bin: 'src/bin.ts' },
  format: ['esm'],
  dts: false,
  // Commands load the MCP SDK and the prompts on demand (separate chunks).
  splitting: true,
  // jsonc-parser, commander and picocolors are bundled too: loaded from node_modules they cost
  // ~100 ms of start-up (jsonc-parser's UMD build is several CommonJS files); bundled, jsonc-parser
  // comes from its ES module build (mainFields below) and the rest is one file to parse.
  noExternal: [/^@wave\//, 'jsonc-parser', 'commander', 'picocolors'],
  // Bundled CommonJS dependencies (the MCP SDK's) call require(): give them one.
  banner: {
    js: "import { createRequire as __waveCreateRequire } from 'node:module'; const require = __waveCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.conditions = ['@wave/source'];
    options.mainFields = ['module', 'main'];
  },
});
