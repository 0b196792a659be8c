import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../../src/agent/host-command.js'
import type { GuestKernel } from './guest-kernel.js'

/**
 * What the first stage needs before there is a root file system: virtio PCI, 9p over virtio
 * (the host's `/`) and overlayfs (to make it writable). Debian builds all four as modules.
 */
const BOOT_MODULES = ['virtio_pci', '9pnet_virtio', '9p', 'overlay']

/** busybox-static's binary: the initramfs has no libc to link against. */
const STATIC_BUSYBOX = '/bin/busybox'

const STAGE_ONE = new URL('./guest-stage1.sh', import.meta.url)

/**
 * Writes the guest's initramfs to file: busybox, the first stage as /init, and the boot
 * modules with their dependencies and a modules.dep naming only them, for busybox's modprobe.
 */
export async function writeInitramfs(kernel: GuestKernel, file: string): Promise<void> {
  const stage = await mkdtemp(`${file}.d-`)
  try {
    await mkdir(path.join(stage, 'bin'))
    await copyFile(STATIC_BUSYBOX, path.join(stage, 'bin', 'busybox'))
    await copyFile(STAGE_ONE, path.join(stage, 'init'))
    await chmod(path.join(stage, 'init'), 0o755)
    const modulesDir = path.join(stage, 'lib', 'modules', kernel.release)
    const depLines = bootModuleDeps(
      await readFile(path.join(kernel.modulesDir, 'modules.dep'), 'utf8'),
      BOOT_MODULES,
    )
    for (const line of depLines) {
      const relative = line.slice(0, line.indexOf(':'))
      await mkdir(path.join(modulesDir, path.dirname(relative)), { recursive: true })
      await copyFile(path.join(kernel.modulesDir, relative), path.join(modulesDir, relative))
    }
    await writeFile(path.join(modulesDir, 'modules.dep'), `${depLines.join('\n')}\n`)
    // The kernel unpacks an initramfs from a cpio "newc" archive; every entry owned by root.
    await runHostCommand('sh', [
      '-c',
      'cd "$0" && find . | busybox cpio -o -H newc -R 0:0 -F "$1"',
      stage,
      file,
    ])
  } finally {
    await rm(stage, { recursive: true, force: true })
  }
}

/**
 * The modules.dep lines of the named modules and of everything they depend on. depmod writes
 * each module's full dependency list on its line, so one level of lookup is enough.
 */
export function bootModuleDeps(modulesDep: string, names: readonly string[]): string[] {
  const lines = new Map<string, string>()
  for (const line of modulesDep.split('\n')) {
    const file = line.slice(0, line.indexOf(':'))
    if (file !== '') lines.set(file, line)
  }
  const byName = new Map([...lines.keys()].map((file) => [moduleName(file), file]))
  const wanted = new Set<string>()
  for (const name of names) {
    const file = byName.get(name)
    const line = file === undefined ? undefined : lines.get(file)
    if (file === undefined || line === undefined)
      throw new Error(`no module ${name} in modules.dep`)
    wanted.add(file)
    for (const dep of line.slice(line.indexOf(':') + 1).split(' ')) if (dep !== '') wanted.add(dep)
  }
  return [...wanted].map((file) => lines.get(file) ?? `${file}:`)
}

/** `kernel/fs/9p/9p.ko` → `9p`; modprobe treats `-` and `_` alike. */
function moduleName(file: string): string {
  return path
    .basename(file)
    .replace(/\.ko(\.\w+)?$/, '')
    .replaceAll('-', '_')
}
