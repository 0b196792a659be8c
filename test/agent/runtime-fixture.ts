import { randomBytes } from 'node:crypto'
import { chmod, lchown, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runHostCommand } from '../../src/agent/host-command.js'
import { ID_MAP_SIZE, ID_RANGES, SANDBOX_IDS_BASE } from '../../src/agent/user-namespace.js'

/**
 * The user namespace every runtime test container gets: the last sandbox range
 * (user-namespace.ts). Agent sandboxes of a test pool take the ranges of their /30s from the
 * pool's start, so these never meet theirs.
 */
export const TEST_ID_MAP = {
  hostID: SANDBOX_IDS_BASE + (ID_RANGES - 1) * ID_MAP_SIZE,
  size: ID_MAP_SIZE,
}

/**
 * A per-test prefix for every host name (STYLE.md habit 12): `sbt` and two random base-36
 * characters, the most PREFIX_PATTERN's five allows.
 */
export function testPrefix(): string {
  const [a = 0, b = 0] = randomBytes(2)
  return `sbt${(a % 36).toString(36)}${(b % 36).toString(36)}`
}

/**
 * A busybox root filesystem (Debian busybox-static) in a temp dir, owned by TEST_ID_MAP's root
 * so root inside the user namespace owns its files.
 */
export async function makeBusyboxRootfs(parent: string): Promise<string> {
  const rootfs = join(parent, 'rootfs')
  for (const dir of ['bin', 'proc', 'dev', 'sys', 'run', 'tmp', 'etc', 'toolbox']) {
    await mkdir(join(rootfs, dir), { recursive: true })
  }
  await runHostCommand('cp', ['/usr/bin/busybox', join(rootfs, 'bin', 'busybox')])
  // gVisor mounts a tmpfs of its own over an empty /tmp; the cases read the files the
  // containers write there from the host, so /tmp holds one file.
  await writeFile(join(rootfs, 'tmp', '.keep'), '')
  const applets = (await runHostCommand('/usr/bin/busybox', ['--list'])).split('\n')
  for (const applet of applets.filter((name) => name !== '' && name !== 'busybox')) {
    await symlink('busybox', join(rootfs, 'bin', applet))
  }
  await chownTree(rootfs, TEST_ID_MAP.hostID)
  return rootfs
}

async function chownTree(path: string, id: number): Promise<void> {
  await lchown(path, id, id)
  const entries = await readdir(path, { withFileTypes: true })
  for (const entry of entries) {
    const child = join(path, entry.name)
    if (entry.isDirectory()) await chownTree(child, id)
    else await lchown(child, id, id)
  }
}

export async function makeTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`))
  // mkdtemp makes 0700; root inside the user namespace is not host root and must traverse it.
  await chmod(dir, 0o755)
  return dir
}

export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

/** A throwaway network namespace named with the test's prefix. */
export async function addNetns(name: string): Promise<string> {
  await runHostCommand('ip', ['netns', 'add', name])
  return `/run/netns/${name}`
}

export async function deleteNetns(name: string): Promise<void> {
  await runHostCommand('ip', ['netns', 'delete', name]).catch(() => undefined)
}
