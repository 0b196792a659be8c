// Builds the two artifacts into OUTDIR (default dist): sandbar.mjs (the CLI) and envd/ (the
// self-contained envd bundle that sandboxes run), each with the native addons it loads beside it.
// Usage: node scripts/build.mjs [OUTDIR]
import { copyFile, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { build } from 'esbuild'

// Bundled CommonJS dependencies call require() and read __dirname (node-pty locates its addon
// with both); an ESM bundle needs them made for it.
const banner = {
  js: [
    "import { createRequire as __sandbarCreateRequire } from 'node:module';",
    "import { fileURLToPath as __sandbarFileURLToPath } from 'node:url';",
    'const require = __sandbarCreateRequire(import.meta.url);',
    "const __dirname = __sandbarFileURLToPath(new URL('.', import.meta.url));",
  ].join(' '),
}
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner,
  logLevel: 'warning',
  // Smaller to parse at every sandbox start; names kept for logged error classes.
  minify: true,
  keepNames: true,
  // Native addons are loaded at run time from ./build/Release beside the bundle.
  external: ['*.node'],
  alias: { bindings: './scripts/bindings-shim.cjs' },
}

const outdir = process.argv[2] ?? 'dist'
await rm(outdir, { recursive: true, force: true })
await Promise.all([
  build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: `${outdir}/sandbar.mjs` }),
  build({ ...common, entryPoints: ['src/envd/main.ts'], outfile: `${outdir}/envd/envd.mjs` }),
])

// envd loads node-pty and fs-xattr; the CLI bundles envd too, plus the store's better-sqlite3.
const envdAddons = [
  'node_modules/node-pty/build/Release/pty.node',
  'node_modules/fs-xattr/build/Release/xattr.node',
]
const addonsOf = {
  [outdir]: [...envdAddons, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'],
  [`${outdir}/envd`]: envdAddons,
}
for (const [dir, addons] of Object.entries(addonsOf)) {
  await mkdir(`${dir}/build/Release`, { recursive: true })
  for (const addon of addons) {
    await copyFile(addon, path.join(dir, 'build/Release', path.basename(addon)))
  }
}
