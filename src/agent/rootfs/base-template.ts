import { createHash } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../../logger.js'
import { runHostCommand } from '../host-command.js'
import { pathExists } from '../path-exists.js'
import { debianSourceLines, readHostAptSources } from './apt-sources.js'
import { BASE_PACKAGES, type DebianRecipe, mmdebstrapArgs } from './mmdebstrap-args.js'
import { mountsUnder, readMounts } from './mountinfo.js'
import { overlayLowerDirs } from './overlay.js'
import type { TemplateLayers } from './rootfs.js'

export const BASE_TEMPLATE_ID = 'base'

/** The host name the base template's /etc/hostname and /etc/hosts name; sandboxes use it too. */
export const BASE_HOSTNAME = 'sandbox'

const SUITE = 'bookworm'

/** Files written over what mmdebstrap left, with their modes. */
const BASE_FILES: Record<string, { text: string; mode: number }> = {
  // mmdebstrap copies the host's resolver (host-facts), and a resolver nobody answers makes
  // `python3 -m http.server` stall ~5 s. 127.0.0.1 is the sandbox's own loopback, where nothing
  // listens on port 53: the kernel refuses at once (ICMP port unreachable → ECONNREFUSED) and
  // lookups fail fast; timeout/attempts bound the wait should a packet ever be dropped.
  'etc/resolv.conf': { text: 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n', mode: 0o644 },
  // mmdebstrap writes no /etc/hosts (host-facts); sudo and getfqdn() look the host name up here.
  'etc/hosts': {
    text: `127.0.0.1\tlocalhost\n127.0.1.1\t${BASE_HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    mode: 0o644,
  },
  'etc/hostname': { text: `${BASE_HOSTNAME}\n`, mode: 0o644 },
  // sudo ignores files in sudoers.d that are writable by anyone but root; 0440 as visudo makes.
  'etc/sudoers.d/user': { text: 'user ALL=(ALL:ALL) NOPASSWD: ALL\n', mode: 0o440 },
}

/** groupadd then useradd, run with the template's own tools through chroot. */
const USER_COMMANDS: readonly (readonly string[])[] = [
  ['groupadd', '--gid', '1000', 'user'],
  [
    'useradd',
    ...['--uid', '1000', '--gid', '1000', '--groups', 'sudo', '--create-home'],
    ...['--home-dir', '/home/user', '--shell', '/bin/bash', 'user'],
  ],
]

export interface BaseTemplateOptions {
  /** Sandbar's data directory; the layer lives in `<dataDir>/layers/`. */
  dataDir: string
  /** Build again even when a layer for this recipe exists. */
  rebuild?: boolean
  logger: Logger
  /** Each line mmdebstrap prints while it builds. */
  onProgress?: (line: string) => void
}

/**
 * How layers store file owners: as the image has them (0, 1000, …), each sandbox seeing them
 * through an idmapped mount (idmapped-overlay.ts). Part of the recipe, so a cache holding
 * layers stored another way is never mistaken for one of these.
 */
const LAYER_IDS = 'idmapped'

/** Identifies a recipe: a change of packages, mirrors, files, user or ID storage rebuilds. */
export function recipeHash(recipe: DebianRecipe): string {
  const definition = {
    args: mmdebstrapArgs(recipe, '<target>'),
    files: BASE_FILES,
    user: USER_COMMANDS,
    ids: LAYER_IDS,
  }
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex').slice(0, 16)
}

/**
 * The `base` template's single layer (issue 3, "The base template"): Debian bookworm from the
 * host's own mirror with user `user` (uid 1000, passwordless sudo), cached under the data
 * directory and built only when missing, when its recipe changed, or when asked.
 */
export async function ensureBaseTemplate(options: BaseTemplateOptions): Promise<TemplateLayers> {
  const sources = debianSourceLines(await readHostAptSources(), SUITE)
  const recipe: DebianRecipe = { suite: SUITE, packages: BASE_PACKAGES, sources }
  const hash = recipeHash(recipe)
  const layersDir = path.join(options.dataDir, 'layers')
  await mkdir(layersDir, { recursive: true })
  // Only root enters: layer files keep the image's owners (uid 1000 owns /home/user), who may
  // be host users too, and sandboxes reach layers only through their idmapped mounts. Set at
  // every start, so a cache made before keeps no wider mode.
  await chmod(layersDir, 0o700)
  const layer = path.join(layersDir, `${BASE_TEMPLATE_ID}-${hash}`)
  const result: TemplateLayers = { templateID: BASE_TEMPLATE_ID, layers: [layer] }
  const running = inFlight.get(layer)
  if (running !== undefined) await running
  else if (options.rebuild === true || !(await pathExists(layer))) {
    const building = buildLayer(recipe, layer, options).finally(() => inFlight.delete(layer))
    inFlight.set(layer, building)
    await building
  }
  return result
}

/** Builds under way in this process, by layer path: concurrent callers wait for one build. */
const inFlight = new Map<string, Promise<void>>()

const TEMP_PREFIX = '.building-base-'

async function buildLayer(
  recipe: DebianRecipe,
  layer: string,
  options: BaseTemplateOptions,
): Promise<void> {
  const layersDir = path.dirname(layer)
  await removeStaleBuilds(layersDir, options.logger)
  const logger = options.logger.child({ templateID: BASE_TEMPLATE_ID, layer })
  // The builder's PID in the name tells a crashed build from one still running elsewhere.
  const temp = await mkdtemp(path.join(layersDir, `${TEMP_PREFIX}${process.pid}-`))
  try {
    await build(recipe, temp, options, logger)
    await install(temp, layer, logger)
  } finally {
    await removeBuild(temp, logger)
  }
}

async function build(
  recipe: DebianRecipe,
  dir: string,
  options: BaseTemplateOptions,
  logger: Logger,
): Promise<void> {
  const started = performance.now()
  logger.info({ sources: recipe.sources }, 'building the base template with mmdebstrap')
  await runHostCommand('mmdebstrap', mmdebstrapArgs(recipe, dir), {
    onLine: (line) => {
      if (line.startsWith('I: ')) logger.info({ line }, 'mmdebstrap')
      else logger.debug({ line }, 'mmdebstrap')
      options.onProgress?.(line)
    },
  })
  const built = performance.now()
  for (const command of USER_COMMANDS) await runHostCommand('chroot', [dir, ...command])
  for (const [file, { text, mode }] of Object.entries(BASE_FILES)) {
    const target = path.join(dir, file)
    // rm first: the file mmdebstrap left may be a symlink, which writeFile would follow.
    await rm(target, { force: true })
    await writeFile(target, text, { mode })
    await chmod(target, mode)
  }
  // mkdtemp made the layer's root 0700; the image's `/` is 0755. mmdebstrap already emptied
  // apt's package lists and archive cache ("cleaning package lists and apt cache"), so the
  // layer holds no downloaded .debs.
  await chmod(dir, 0o755)
  logger.info({ mmdebstrapMillis: Math.round(built - started) }, 'base template built')
}

/**
 * Renames the finished tree into place (atomic on one filesystem), so a crash never leaves a
 * half layer under the final name. A layer being replaced is moved aside first and deleted
 * unless an overlay still uses it: changing a mounted overlay's lower is undefined (kernel
 * overlayfs docs), so it then stays for reconcile.
 */
async function install(temp: string, layer: string, logger: Logger): Promise<void> {
  if (await pathExists(layer)) {
    // Sandboxes stack the layer's idmapped mount, staged under the layer's own name.
    const inUse = (await readMounts()).some(
      (entry) =>
        entry.fsType === 'overlay' &&
        overlayLowerDirs(entry.superOptions).some(
          (dir) => path.basename(dir) === path.basename(layer),
        ),
    )
    const retired = path.join(path.dirname(layer), `.retired-${path.basename(layer)}-${Date.now()}`)
    await rename(layer, retired)
    await rename(temp, layer)
    if (inUse) logger.warn({ retired }, 'replaced base layer is in use; left for reconcile')
    else await rm(retired, { recursive: true, force: true })
    return
  }
  await rename(temp, layer).catch((error: unknown) => {
    // Another agent sharing the data directory finished the same recipe first: keep theirs.
    const code = error instanceof Error && 'code' in error ? error.code : undefined
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
    logger.info('base template built concurrently elsewhere; keeping that one')
  })
}

/** Removes a build directory unless something is still mounted inside it. */
async function removeBuild(dir: string, logger: Logger): Promise<void> {
  const mounts = await mountsUnder(dir)
  if (mounts.length > 0) {
    // rm would descend into a still-mounted /proc or /dev and delete host objects.
    logger.error({ dir, mounts }, 'build directory still has mounts; not removing it')
    return
  }
  await rm(dir, { recursive: true, force: true })
}

/**
 * Earlier builds interrupted by a crash or kill leave their temp directory behind; one whose
 * builder still runs (another agent or test run sharing the data directory) is left alone.
 */
async function removeStaleBuilds(layersDir: string, logger: Logger): Promise<void> {
  for (const name of await readdir(layersDir)) {
    if (!name.startsWith(TEMP_PREFIX)) continue
    const pid = Number.parseInt(name.slice(TEMP_PREFIX.length), 10)
    if (Number.isInteger(pid) && isRunning(pid)) continue
    await removeBuild(path.join(layersDir, name), logger)
  }
}

function isRunning(pid: number): boolean {
  try {
    // Signal 0 checks that the process exists without sending anything.
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM'
  }
}
