import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';
import { waveTsupConfig } from '../../tsup.shared.ts';

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

const uiDir = fileURLToPath(new URL('./ui/', import.meta.url));

/**
 * `import js from 'wave-ui:script'` / `'wave-ui:styles'`: the `wave ui` page,
 * bundled for the browser (Preact + htm, minified) by the same esbuild and
 * embedded in the binary as text, so nothing is fetched from a CDN or looked
 * up on disk at runtime.
 */
const uiAssets: Plugin = {
  name: 'wave-ui-assets',
  setup(build) {
    build.onResolve({ filter: /^wave-ui:/ }, (args) => ({ path: args.path, namespace: 'wave-ui' }));
    build.onLoad({ filter: /.*/, namespace: 'wave-ui' }, async (args) => {
      if (args.path === 'wave-ui:styles') {
        return {
          contents: await readFile(`${uiDir}app.css`, 'utf8'),
          loader: 'text',
          watchFiles: [`${uiDir}app.css`],
        };
      }
      const result = await build.esbuild.build({
        entryPoints: [`${uiDir}app.ts`],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        minify: true,
        metafile: true,
        legalComments: 'none',
      });
      return {
        contents: result.outputFiles[0]?.text ?? '',
        loader: 'text',
        watchFiles: Object.keys(result.metafile.inputs),
      };
    });
  },
};

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
  esbuildPlugins: [uiAssets],
  // Bundled CommonJS dependencies (the MCP SDK's) call require(): give them one.
  banner: {
    js: "import { createRequire as __waveCreateRequire } from 'node:module'; const require = __waveCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.conditions = ['@wave/source'];
    options.mainFields = ['module', 'main'];
  },
});
