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
  noExternal: [/^@wave\//],
  // Bundled CommonJS dependencies (the MCP SDK's) call require(): give them one.
  banner: {
    js: "import { createRequire as __waveCreateRequire } from 'node:module'; const require = __waveCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.conditions = ['@wave/source'];
  },
});
