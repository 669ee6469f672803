#!/usr/bin/env node
// Prints the names each package's root entry (src/index.ts) exports, split
// into runtime values and type-only names, using the TypeScript compiler API.
// Usage: node scripts/export-counts.mjs [--names] [package-dir ...]
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const ts = require('typescript');

const args = process.argv.slice(2);
const showNames = args.includes('--names');
const dirs = args.filter((a) => !a.startsWith('--'));
const packages = dirs.length
  ? dirs.map((d) => resolve(d))
  : ['packages', 'apps'].flatMap((group) =>
      existsSync(join(root, group))
        ? readdirSync(join(root, group)).map((name) => join(root, group, name))
        : [],
    );

const entries = packages
  .map((dir) => ({ dir, file: join(dir, 'src', 'index.ts') }))
  .filter((p) => existsSync(p.file));

const program = ts.createProgram(
  entries.map((e) => e.file),
  {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    customConditions: ['@wave/source'],
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  },
);
const checker = program.getTypeChecker();

let total = { values: 0, types: 0 };
for (const { dir, file } of entries) {
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) continue;
  const values = [];
  const types = [];
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    // A class or enum is both; it counts as a runtime name.
    if (target.flags & ts.SymbolFlags.Value) values.push(symbol.name);
    else types.push(symbol.name);
  }
  values.sort();
  types.sort();
  total = { values: total.values + values.length, types: total.types + types.length };
  const name = dir.slice(root.length + 1);
  console.log(
    `${name}: ${values.length + types.length} exports (${values.length} runtime, ${types.length} types)`,
  );
  if (showNames) {
    console.log(`  runtime: ${values.join(', ')}`);
    console.log(`  types:   ${types.join(', ')}`);
  }
}
console.log(`total: ${total.values + total.types} (${total.values} runtime, ${total.types} types)`);
