import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { runHostCommand } from '../../src/agent/host-command.js'
import { pathExists } from '../../src/agent/path-exists.js'

const execFileAsync = promisify(execFile)

/**
 * Unpacked guest kernels, one directory per Debian package and version. Only the newest stays:
 * a kernel is ~400 MB unpacked, and the archive drops old ABIs anyway.
 */
export const GUEST_KERNEL_CACHE = '/var/cache/sandbar-test/guest-kernel'

/** Debian's metapackage for the stock kernel; it depends on the current ABI's image package. */
const KERNEL_METAPACKAGE = 'linux-image-amd64'

export interface GuestKernel {
  /** `uname -r` in the guest, e.g. `6.1.0-50-amd64`. */
  release: string
  vmlinuz: string
  /** `lib/modules/<release>`, with the modules.dep and modules.alias busybox's modprobe reads. */
  modulesDir: string
}

/**
 * The stock Debian kernel, fetched with `apt-get download` and unpacked with `dpkg -x` into
 * the cache, never installed on the host. Its modules are indexed with busybox's depmod, so the
 * guest's modprobe finds them and the kernel can load modules on demand (overlay, veth,
 * nf_tables, …).
 */
export async function ensureGuestKernel(cacheDir = GUEST_KERNEL_CACHE): Promise<GuestKernel> {
  const pkg = kernelPackageName(await runHostCommand('apt-cache', ['depends', KERNEL_METAPACKAGE]))
  const version = packageVersion(
    await runHostCommand('apt-cache', ['show', '--no-all-versions', pkg]),
  )
  const release = pkg.replace(/^linux-image-/, '')
  const root = path.join(cacheDir, `${pkg}_${version}`)
  const kernel: GuestKernel = {
    release,
    vmlinuz: path.join(root, 'boot', `vmlinuz-${release}`),
    modulesDir: path.join(root, 'lib', 'modules', release),
  }
  if (await pathExists(path.join(kernel.modulesDir, 'modules.dep'))) return kernel
  await mkdir(cacheDir, { recursive: true })
  await fetchKernel(pkg, version, release, root)
  for (const entry of await readdir(cacheDir)) {
    if (path.join(cacheDir, entry) !== root)
      await rm(path.join(cacheDir, entry), { recursive: true })
  }
  return kernel
}

/** Downloads, unpacks and indexes into a temp dir beside root, then renames it into place. */
async function fetchKernel(pkg: string, version: string, release: string, root: string) {
  const temp = await mkdtemp(`${root}.fetching-`)
  try {
    // apt downloads as the unprivileged _apt user, which must be able to write here.
    await chmod(temp, 0o755)
    // `apt-get download` saves into its working directory.
    await execFileAsync('apt-get', ['download', '-qq', `${pkg}=${version}`], { cwd: temp }).catch(
      (error: unknown) => {
        throw new Error(`cannot download ${pkg}=${version} (apt-get update?)`, { cause: error })
      },
    )
    const debs = (await readdir(temp)).filter((name) => name.endsWith('.deb'))
    const [deb] = debs
    if (deb === undefined || debs.length > 1) throw new Error(`expected one .deb in ${temp}`)
    const unpacked = path.join(temp, 'root')
    await runHostCommand('dpkg', ['-x', path.join(temp, deb), unpacked])
    await runHostCommand('busybox', ['depmod', '-b', unpacked, release])
    await rename(unpacked, root)
  } finally {
    await rm(temp, { recursive: true, force: true })
  }
}

/** The image package in `apt-cache depends linux-image-amd64`. */
export function kernelPackageName(stdout: string): string {
  const match = /^\s*Depends: (linux-image-[0-9][^\s]*-amd64)$/m.exec(stdout)
  if (match?.[1] === undefined) throw new Error(`no kernel image in: ${stdout.trim()}`)
  return match[1]
}

/** The Version field of `apt-cache show --no-all-versions <package>`. */
export function packageVersion(stdout: string): string {
  const match = /^Version: (\S+)$/m.exec(stdout)
  if (match?.[1] === undefined) throw new Error(`no version in: ${stdout.trim()}`)
  return match[1]
}
