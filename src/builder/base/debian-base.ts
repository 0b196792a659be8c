import { createHash } from 'node:crypto'
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand, SANDBOX_HOSTNAME } from '../../agent/index.js'
import type { Logger } from '../../logger.js'
import { debianSourceLines, readHostAptSources } from './apt-sources.js'
import { BASE_PACKAGES, type DebianRecipe, mmdebstrapArgs } from './mmdebstrap-args.js'

/**
 * The image name that means Sandbar's own Debian base rather than a registry pull: the SDK's
 * `fromBaseImage()` default, so templates build on a machine that cannot reach Docker Hub.
 */
export const DEBIAN_BASE_IMAGES: ReadonlySet<string> = new Set([
  'e2bdev/base',
  'e2bdev/base:latest',
  'docker.io/e2bdev/base',
  'docker.io/e2bdev/base:latest',
])

const SUITE = 'bookworm'

/** Files every template's sandboxes need, written over what its image has, with their modes. */
const SANDBOX_FILES: Record<string, { text: string; mode: number }> = {
  // mmdebstrap copies the host's resolver (host-facts), and a resolver nobody answers makes
  // `python3 -m http.server` stall ~5 s. 127.0.0.1 is the sandbox's own loopback, where nothing
  // listens on port 53: the kernel refuses at once (ICMP port unreachable → ECONNREFUSED) and
  // lookups fail fast; timeout/attempts bound the wait should a packet ever be dropped.
  'etc/resolv.conf': { text: 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n', mode: 0o644 },
  // mmdebstrap writes no /etc/hosts (host-facts); sudo and getfqdn() look the host name up here.
  'etc/hosts': {
    text: `127.0.0.1\tlocalhost\n127.0.1.1\t${SANDBOX_HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    mode: 0o644,
  },
  'etc/hostname': { text: `${SANDBOX_HOSTNAME}\n`, mode: 0o644 },
}

/** Files written over what mmdebstrap left, with their modes. */
const BASE_FILES: Record<string, { text: string; mode: number }> = {
  ...SANDBOX_FILES,
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

/**
 * How layers store file owners: as the image has them (0, 1000, …), each sandbox seeing them
 * through an idmapped mount. Part of the recipe, so a cache holding layers stored another way
 * is never mistaken for one of these.
 */
const LAYER_IDS = 'idmapped'

/**
 * Sandbar's Debian base (issue 3, "The base template"): bookworm from the host's own mirror with
 * user `user` (uid 1000, passwordless sudo), python3 and the tools E2B's base has.
 */
export async function debianBaseRecipe(): Promise<DebianRecipe> {
  const sources = debianSourceLines(await readHostAptSources(), SUITE)
  return { suite: SUITE, packages: BASE_PACKAGES, sources }
}

/**
 * The layer ID of a recipe: a change of packages, mirrors, files, user or ID storage makes
 * another layer.
 */
export function debianBaseLayerID(recipe: DebianRecipe): string {
  const definition = {
    args: mmdebstrapArgs(recipe, '<target>'),
    files: BASE_FILES,
    user: USER_COMMANDS,
    ids: LAYER_IDS,
  }
  const hash = createHash('sha256').update(JSON.stringify(definition)).digest('hex')
  return `base-${hash.slice(0, 16)}`
}

/** Builds the recipe's tree into the empty directory `dir` (a layer store's `add` fill). */
export async function buildDebianBase(
  recipe: DebianRecipe,
  dir: string,
  logger: Logger,
  onProgress?: (line: string) => void,
): Promise<void> {
  const started = performance.now()
  logger.info({ sources: recipe.sources }, 'building the Debian base with mmdebstrap')
  await runHostCommand('mmdebstrap', mmdebstrapArgs(recipe, dir), {
    onLine: (line) => {
      if (line.startsWith('I: ')) logger.info({ line }, 'mmdebstrap')
      else logger.debug({ line }, 'mmdebstrap')
      onProgress?.(line)
    },
  })
  for (const command of USER_COMMANDS) await runHostCommand('chroot', [dir, ...command])
  await writeSandboxFiles(dir, BASE_FILES)
  // mmdebstrap already emptied apt's package lists and archive cache ("cleaning package lists
  // and apt cache"), so the layer holds no downloaded .debs.
  logger.info({ durationMs: Math.round(performance.now() - started) }, 'Debian base built')
}

/**
 * Writes the resolver, hosts and hostname files every template's sandboxes rely on into an
 * image's tree (or the given files instead).
 */
export async function writeSandboxFiles(
  dir: string,
  files: Record<string, { text: string; mode: number }> = SANDBOX_FILES,
): Promise<void> {
  await mkdir(path.join(dir, 'etc'), { recursive: true, mode: 0o755 })
  for (const [file, { text, mode }] of Object.entries(files)) {
    const target = path.join(dir, file)
    // rm first: the image's file may be a symlink (to systemd's resolver, say), which
    // writeFile would follow out of the tree.
    await rm(target, { force: true })
    await writeFile(target, text, { mode })
    await chmod(target, mode)
  }
}
