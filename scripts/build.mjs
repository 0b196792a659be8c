// Builds the artifacts into OUTDIR (default dist): sandbar.mjs (the CLI) and envd/ (the
// self-contained envd that sandboxes run: envd.cjs, which runs the bundle bundle.cjs with the V8
// code cache bundle.cjs.cache), each with the native addons it loads and envd's run-as beside
// it, interpreter/ (the code interpreter: interpreter.mjs and python/), idmapped-mount
// (src/agent/rootfs/idmapped-mount.c: the agent mounts sandbox roots and volumes with it),
// user-namespace (src/agent/user-namespace.c: it makes each sandbox's namespaces) and
// without-unified-cgroup (src/agent/runtime/without-unified-cgroup.c: crun runs through it on
// a hybrid-cgroup host).
// Usage: node scripts/build.mjs [OUTDIR]
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, cp, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'

// Bundled CommonJS dependencies call require() and read __dirname (node-pty locates its addon
// with both); an ESM bundle needs them made for it.
const esmBanner = {
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
  build({
    ...common,
    banner: esmBanner,
    entryPoints: ['src/cli/main.ts'],
    outfile: `${outdir}/sandbar.mjs`,
  }),
  // CommonJS, because Node 20 runs only a vm.Script with a code cache (code-cache-loader.ts).
  // fs-xattr finds its addon from import.meta.url, which CommonJS has no equivalent of.
  build({
    ...common,
    format: 'cjs',
    banner: {
      js: "const __sandbarImportMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    define: { 'import.meta.url': '__sandbarImportMetaUrl' },
    // Not in envd, which every sandbox runs: its ~840 name fix-ups gave each function a map
    // of its own. Through the SDK, ten sandboxes idle after a command were charged 15.0 MiB
    // each without them, 15.8 with (two alternating runs); envd logs its errors' messages.
    keepNames: false,
    entryPoints: ['src/envd/main.ts'],
    outfile: `${outdir}/envd/bundle.cjs`,
  }),
  // CommonJS as well: an ES module entry costs every sandbox start Node's ESM loader.
  build({
    ...common,
    format: 'cjs',
    entryPoints: ['src/envd/code-cache-loader.ts'],
    outfile: `${outdir}/envd/envd.cjs`,
  }),
  // The code interpreter (port 49999) and its javascript, typescript and bash workers
  // (`interpreter.mjs worker <language>`), run by envd's node inside interpreter sandboxes.
  build({
    ...common,
    // The bundled typescript (typescript workers) reads __filename as well.
    banner: { js: `${esmBanner.js} const __filename = __sandbarFileURLToPath(import.meta.url);` },
    entryPoints: ['src/interpreter/main.ts'],
    outfile: `${outdir}/interpreter/interpreter.mjs`,
  }),
])
// Its Python worker, beside it as interpreter/python/ (index.ts: bundledWorkerCommand).
if (existsSync('src/interpreter/python')) {
  await cp('src/interpreter/python', `${outdir}/interpreter/python`, { recursive: true })
}

// envd loads node-pty, fs-xattr and its own thread-credentials, listening-sockets and
// process-spawn (binding.gyp, built by `npm install`); the CLI bundles envd too, plus the
// store's better-sqlite3 and the agent's mount-calls.
const envdAddons = [
  'node_modules/node-pty/build/Release/pty.node',
  'node_modules/fs-xattr/build/Release/xattr.node',
  'build/Release/thread_credentials.node',
  'build/Release/listening_sockets.node',
  'build/Release/process_spawn.node',
]
const addonsOf = {
  [outdir]: [
    ...envdAddons,
    'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    'build/Release/mount_calls.node',
  ],
  [`${outdir}/envd`]: envdAddons,
}
for (const [dir, addons] of Object.entries(addonsOf)) {
  await mkdir(`${dir}/build/Release`, { recursive: true })
  for (const addon of addons) {
    await copyFile(addon, path.join(dir, 'build/Release', path.basename(addon)))
  }
}

// Static: it runs on the host only, but needs no library of the machine it is copied to.
await compileStatic('src/agent/rootfs/idmapped-mount.c', `${outdir}/idmapped-mount`)
await compileStatic('src/agent/user-namespace.c', `${outdir}/user-namespace`)
await compileStatic(
  'src/agent/runtime/without-unified-cgroup.c',
  `${outdir}/without-unified-cgroup`,
)
// envd's run-as, beside each bundle that runs envd (run-as-path.ts); static, it runs in any
// rootfs without the toolbox's loader.
for (const dir of [outdir, `${outdir}/envd`]) {
  await compileStatic('src/envd/process/run-as.c', `${dir}/run-as`)
}
// envd's launcher in sandboxes under `serve --share-envd-memory` (toolbox.ts).
await compileStatic('src/envd/share-memory.c', `${outdir}/envd/share-memory`)

async function compileStatic(source, output) {
  await promisify(execFile)('cc', [
    ...['-O2', '-static', '-Wall', '-Wextra', '-Werror'],
    ...['-o', output, source],
  ])
}

// The code cache: envd started once, on a free loopback port, by the node running this build,
// which is the node the toolbox copies, without V8 flags or NODE_OPTIONS, as sandboxes start
// it: V8 rejects a cache made under other flags.
await promisify(execFile)(
  process.execPath,
  [`${outdir}/envd/envd.cjs`, '--port', '0', '--host', '127.0.0.1'],
  {
    env: { PATH: process.env.PATH, SANDBAR_ENVD_WRITE_CODE_CACHE: '1', SANDBAR_LOG_LEVEL: 'warn' },
  },
)
