import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import vm from 'node:vm'

// envd's entry in the toolbox (dist/envd/envd.cjs). It runs the CommonJS bundle beside it
// (bundle.cjs) through vm.Script with the V8 code cache that scripts/build.mjs wrote next to it:
// compiling the bundle and the functions envd runs while starting is ~15 ms of every sandbox
// start, and Node 20 caches user code only this way. Without a usable cache (none written, or
// another node's) V8 compiles from source and envd behaves the same. The entry is CommonJS
// too: an ES module entry makes Node 20 load its ESM loader first, ~10 ms of every start.

/** What the bundle exports: main.ts's `started`. */
interface EnvdBundle {
  started: Promise<{ port: number }>
}

type CommonJsWrapper = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  filename: string,
  dirname: string,
) => void

const bundle = path.join(__dirname, 'bundle.cjs')
const cacheFile = `${bundle}.cache`

// Node's own CommonJS wrapper, on the first line so that stack traces keep their line numbers.
const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(bundle, 'utf8')}\n})`
const cachedData = readCache()
const script = new vm.Script(source, { filename: bundle, cachedData })
if (cachedData !== undefined && script.cachedDataRejected === true) {
  // Another node's cache, or a V8 flag on the command line that it was not made under: envd
  // starts all the same, compiling from source, ~20 ms slower.
  process.emitWarning(`V8 rejected envd's code cache ${cacheFile}; compiling from source`)
}
const bundleModule = { exports: {} }
const wrapper = script.runInThisContext() as CommonJsWrapper
wrapper(bundleModule.exports, createRequire(bundle), bundleModule, bundle, path.dirname(bundle))

// V8 flags that keep envd's young generation small instead of letting it grow to 2 × 16 MiB
// under load and keeping it while idle. Set here, not on node's command line: there any V8
// flag makes V8 reject node's built-in code cache, ~15 ms more of every start. Set once the
// bundle is loaded, since V8 checks a code cache against the flags, and never while the build
// writes the cache. By now the heap is configured, so `--optimize-for-size` alone no longer
// caps the young generation; a growth factor of 1 does, and is read at each growth. Through
// the SDK, after 650 commands and small file calls an envd's V8 heap held 18 MiB this way,
// 21 MiB with the flag on the command line and 29 MiB with it here alone; 100 MiB transfers
// ran as fast.
const HEAP_FLAGS = '--optimize-for-size --semi-space-growth-factor=1'

// Node's own modules that envd loads only once it serves: `net` loads cluster at listen, a
// command child_process, a terminal tty. Node compiles each from its built-in code cache, which
// V8 rejects for good once any flag changes at run time, as HEAP_FLAGS do: loaded after them,
// these three took ~5.3 ms of every sandbox start to compile from source, and ~1.4 ms before.
// `fs.opendir` and `fs.watch` load their internals lazily too, but only node can reach those.
const BUILTINS_LOADED_WHILE_SERVING = ['node:cluster', 'node:child_process', 'node:tty']

// Set by scripts/build.mjs only. Once envd has started and answered what the agent asks of
// every new sandbox (`/health`, then `/init`) and a first command, the functions compiled so
// far are the cache. The command puts the lazily loaded Connect side and the process path in
// it too: a sandbox's first command answers sooner, for a little more memory per envd.
if (process.env.SANDBAR_ENVD_WRITE_CODE_CACHE !== '1') {
  for (const builtin of BUILTINS_LOADED_WHILE_SERVING) require(builtin)
  setFlagsFromString(HEAP_FLAGS)
} else {
  // A failure is an unhandled rejection: node prints it and exits 1, failing the build.
  void writeCodeCache().then(() => process.exit(0))
}

async function writeCodeCache(): Promise<void> {
  const { port } = await (bundleModule.exports as EnvdBundle).started
  await fetch(`http://127.0.0.1:${port}/health`)
  await fetch(`http://127.0.0.1:${port}/init`, { method: 'POST', body: '{}' })
  // A command, as a client's first call usually is: `Start` streams, so its request is one
  // Connect envelope (flags byte, big-endian length, JSON message).
  const start = Buffer.from(JSON.stringify({ process: { cmd: 'true' } }))
  const envelope = Buffer.alloc(5 + start.length)
  envelope.writeUInt32BE(start.length, 1)
  start.copy(envelope, 5)
  const started = await fetch(`http://127.0.0.1:${port}/process.Process/Start`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+json' },
    body: envelope,
  })
  await started.arrayBuffer()
  writeFileSync(cacheFile, script.createCachedData())
}

/** The cache, if the build wrote one; it only speeds start, so any failure means none. */
function readCache(): Buffer | undefined {
  try {
    return readFileSync(cacheFile)
  } catch {
    return undefined
  }
}
