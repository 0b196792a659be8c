import { createHash } from 'node:crypto'
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
} from 'node:fs/promises'
import path from 'node:path'
import { RUN_AS_FILE } from '../../envd/index.js'
import type { Logger } from '../../logger.js'
import { pathExists } from '../path-exists.js'
import type { Toolbox } from './rootfs.js'
import { sharedLibraries } from './shared-libraries.js'

/** Where the toolbox appears inside every sandbox. */
export const TOOLBOX_MOUNT_POINT = '/.sandbar'

/** The loader's file name in `lib/`: started directly, it runs node whatever libc the rootfs has. */
const LOADER = 'ld-linux-x86-64.so.2'

/** envd's launcher that makes its memory shareable (share-memory.c). */
const SHARE_MEMORY = 'envd/share-memory'

/** What runs from the toolbox outside `bin/`: the loader, and envd's static helpers. */
const EXECUTABLES = new Set([`lib/${LOADER}`, `envd/${RUN_AS_FILE}`, SHARE_MEMORY])

/** Debian's `tini` package: the static build runs in any rootfs (host-facts). */
const TINI = '/usr/bin/tini-static'

export interface ToolboxOptions {
  /** Sandbar's data directory; the toolbox lives in `<dataDir>/toolbox/<inputs hash>/`. */
  dataDir: string
  /**
   * scripts/build.mjs's output: `<dir>/envd/envd.cjs` beside the bundle and code cache it runs,
   * and `<dir>/envd/build/Release/*.node`.
   */
  envdBuildDir: string
  /** Start envd so that KSM shares its pages with other sandboxes' envds (share-memory.c). */
  shareEnvdMemory: boolean
  logger: Logger
}

const inside = (file: string): string => path.posix.join(TOOLBOX_MOUNT_POINT, file)

/**
 * The argv that runs `script` (a path in the toolbox) with the toolbox's node, through its own
 * loader and libraries (host-facts), whatever libc the sandbox's rootfs has.
 */
export function toolboxNodeArgv(script: string, nodeFlags: string[] = []): string[] {
  return [
    inside(`lib/${LOADER}`),
    '--library-path',
    inside('lib'),
    inside('bin/node'),
    ...nodeFlags,
    inside(script),
  ]
}

/**
 * How envd starts when its memory is shared: through share-memory, and with V8 predictable
 * (its seed fixed, its garbage collection and compilation on the main thread only), so that
 * every envd places its heap at the same addresses and fills it alike. 60 idle sandboxes
 * took 11.3 MiB each with the seed fixed alone, 6.2 MiB with this (15.2 without sharing);
 * commands and file transfers measured the same. The seed also fixes Math.random and V8's hash seed, which envd uses for nothing secret (its
 * tokens come from node:crypto) and which no other sandbox can reach.
 */
const SHARED_ENVD = {
  launcher: [inside(SHARE_MEMORY)],
  nodeFlags: ['--predictable'],
}

/**
 * envd's node runs one V8 worker thread, not node's default four: its heap is small and its
 * sandbox has a core or two, and each thread kept its own stack and malloc arena. An idle envd
 * after 50 commands held 12.0 MiB of anonymous memory this way, 13.3 MiB with four (five
 * alternating runs each), and started as fast. A node option, not a V8 flag: with it V8 still
 * takes node's built-in code cache and envd's (envd-code-cache.test.ts).
 */
const ENVD = { launcher: [], nodeFlags: ['--v8-pool-size=1'] }

/** A toolbox at `dir` on the host, seen by sandboxes at TOOLBOX_MOUNT_POINT. */
export function toolboxAt(dir: string, shareEnvdMemory: boolean): Toolbox {
  // No V8 flags otherwise: on Node 20's command line any makes V8 reject node's built-in code
  // cache, ~15 ms more of every start (envd sets the flags it wants once loaded, envd.cjs).
  const envd = shareEnvdMemory ? SHARED_ENVD : ENVD
  return {
    dir,
    mountPoint: TOOLBOX_MOUNT_POINT,
    // tini is PID 1 and so reaps orphans without -s (that flag is for a non-PID-1 subreaper).
    // The environment is the caller's: it must not carry NODE_EXTRA_CA_CERTS (host-facts: ~40 ms per start).
    initArgs: (port) => [
      inside('bin/tini'),
      '--',
      ...envd.launcher,
      ...toolboxNodeArgv('envd/envd.cjs', envd.nodeFlags),
      '--port',
      String(port),
      // The agent's handover arrives as PID 1's stdin, which tini passes on to envd.
      '--handover-fd',
      '0',
    ],
  }
}

/**
 * Assembles the read-only toolbox (DESIGN.md, "A sandbox"): this process's node, envd and its
 * native addons and run-as, the code interpreter (`interpreter/`: code-interpreter-v1 starts
 * it), tini, and every shared library they load plus the loader. Each set of inputs gets its
 * own directory, so sandboxes still running on an earlier one keep working.
 */
export async function ensureToolbox(options: ToolboxOptions): Promise<Toolbox> {
  const envdDir = path.join(options.envdBuildDir, 'envd')
  const addonDir = path.join(envdDir, 'build', 'Release')
  const addons = (await readdir(addonDir)).filter((name) => name.endsWith('.node')).sort()
  const envdFiles = (await readdir(envdDir, { withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort()
  const interpreterDir = path.join(options.envdBuildDir, 'interpreter')
  const interpreterFiles = await filesUnder(interpreterDir)
  const files = new Map<string, string>([
    ['bin/node', process.execPath],
    ['bin/tini', TINI],
    ...envdFiles.map((name): [string, string] => [`envd/${name}`, path.join(envdDir, name)]),
    ...addons.map((name): [string, string] => [
      `envd/build/Release/${name}`,
      path.join(addonDir, name),
    ]),
    ...interpreterFiles.map((name): [string, string] => [
      `interpreter/${name}`,
      path.join(interpreterDir, name),
    ]),
  ])
  const root = path.join(options.dataDir, 'toolbox')
  const dir = path.join(root, await inputsHash(files))
  if (await pathExists(dir)) return toolboxAt(dir, options.shareEnvdMemory)
  const loaded = [process.execPath, ...addons.map((name) => path.join(addonDir, name))]
  for (const file of loaded) {
    for (const library of await sharedLibraries(file)) {
      if (library.path !== null && !files.has(`lib/${library.name}`)) {
        files.set(`lib/${library.name}`, library.path)
      }
    }
  }
  if (!files.has(`lib/${LOADER}`)) throw new Error(`ldd listed no ${LOADER} for node`)
  await mkdir(root, { recursive: true })
  const temp = await mkdtemp(path.join(root, '.building-'))
  try {
    await copyAll(temp, files)
    await rename(temp, dir)
  } finally {
    await rm(temp, { recursive: true, force: true })
  }
  options.logger.info({ dir, files: files.size }, 'toolbox assembled')
  return toolboxAt(dir, options.shareEnvdMemory)
}

/** Sandbar's own build output, whose content is hashed. */
const BUILT_FILES = ['envd/', 'interpreter/']

/** Every file below `dir`, as paths relative to it, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort()
}

/**
 * Names the inputs: paths, sizes and mtimes of host binaries (node alone is ~100 MB, too slow
 * to hash at every start), and the content of the envd bundle and addons, which change with
 * every build.
 */
async function inputsHash(files: ReadonlyMap<string, string>): Promise<string> {
  const hash = createHash('sha256')
  for (const [destination, source] of files) {
    hash.update(`${destination}\0${source}\0`)
    if (BUILT_FILES.some((dir) => destination.startsWith(dir))) hash.update(await readFile(source))
    else {
      const stats = await stat(source)
      hash.update(`${stats.size}\0${stats.mtimeMs}\0`)
    }
  }
  return hash.digest('hex').slice(0, 16)
}

/** Copies every file, readable (and where needed executable) by every sandbox's IDs. */
async function copyAll(dir: string, files: ReadonlyMap<string, string>): Promise<void> {
  const dirs = new Set<string>([dir])
  for (const [destination, source] of files) {
    const target = path.join(dir, destination)
    for (let parent = path.dirname(target); parent !== dir; parent = path.dirname(parent)) {
      dirs.add(parent)
    }
    await mkdir(path.dirname(target), { recursive: true })
    await copyFile(source, target)
    const executable = EXECUTABLES.has(destination) || destination.startsWith('bin/')
    await chmod(target, executable ? 0o755 : 0o644)
  }
  // mkdtemp makes 0700 and the umask may be strict; every sandbox's root is "other" here.
  for (const parent of dirs) await chmod(parent, 0o755)
}
