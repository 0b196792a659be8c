import { execFile, spawn } from 'node:child_process'
import { chmod, copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import type { StepSandbox } from '../../../src/builder/steps/index.js'

const execFileAsync = promisify(execFile)

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** An account of the rootfs, read from its own /etc/passwd as envd reads the sandbox's. */
export async function readAccount(
  rootfs: string,
  name: string,
): Promise<{ uid: number; gid: number; home: string; shell: string } | undefined> {
  const passwd = await readFile(path.join(rootfs, 'etc/passwd'), 'utf8')
  for (const line of passwd.split('\n')) {
    const [entry, , uid, gid, , home, shell] = line.split(':')
    if (entry === name && uid && gid && home !== undefined) {
      return { uid: Number(uid), gid: Number(gid), home, shell: shell ?? '' }
    }
  }
  return undefined
}

/**
 * A StepSandbox over a directory: processes run chrooted into it as the account its
 * /etc/passwd names, with envd's environment rules (PATH, HOME, USER, LOGNAME, then `envs`)
 * and the user's home as the default directory; uploads are root's, mode 0600.
 */
export function chrootSandbox(rootfs: string): StepSandbox {
  return {
    async run(argv, options) {
      const account = await readAccount(rootfs, options.user)
      if (!account) throw new Error(`user ${options.user} does not exist in the rootfs`)
      const env = {
        PATH,
        HOME: account.home,
        USER: options.user,
        LOGNAME: options.user,
        ...options.envs,
      }
      const cwd = options.cwd ?? account.home
      const child = spawn(
        'chroot',
        [
          `--userspec=${account.uid}:${account.gid}`,
          rootfs,
          '/bin/sh',
          '-c',
          'cd "$1" || exit 97; shift; exec "$@"',
          'sh',
          cwd,
          ...argv,
        ],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      const streams = [
        forwardLines(child.stdout, 'stdout', options.onOutput),
        forwardLines(child.stderr, 'stderr', options.onOutput),
      ]
      const code = await new Promise<number>((resolve, reject) => {
        child.once('error', reject)
        child.once('close', (exitCode) => resolve(exitCode ?? 128))
      })
      await Promise.all(streams)
      return code
    },
    async upload(file, data) {
      const target = path.join(rootfs, file)
      await mkdir(path.dirname(target), { recursive: true })
      await writeFile(target, data, { mode: 0o600 })
    },
  }
}

async function forwardLines(
  stream: NodeJS.ReadableStream,
  name: 'stdout' | 'stderr',
  onOutput: ((line: string, stream: 'stdout' | 'stderr') => void) | undefined,
): Promise<void> {
  for await (const line of createInterface({ input: stream })) onOutput?.(line, name)
}

/** The bones every test rootfs has: root's account, /tmp, /dev/null, /usr/local, /etc/skel. */
async function baseRootfs(rootfs: string): Promise<void> {
  for (const dir of ['etc/skel', 'tmp', 'dev', 'root', 'home', 'usr/local/bin']) {
    await mkdir(path.join(rootfs, dir), { recursive: true })
  }
  // mkdtemp's 0700 would keep every user but root out of the whole tree.
  await chmod(rootfs, 0o755)
  await chmod(path.join(rootfs, 'tmp'), 0o1777)
  await chmod(path.join(rootfs, 'root'), 0o700)
  await writeFile(path.join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n')
  await writeFile(path.join(rootfs, 'etc/group'), 'root:x:0:\nsudo:x:27:\n')
  await writeFile(path.join(rootfs, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 })
  await writeFile(path.join(rootfs, 'etc/skel/.profile'), '# from skel\n')
  await execFileAsync('mknod', ['-m', '666', path.join(rootfs, 'dev/null'), 'c', '1', '3'])
}

/** A rootfs with nothing but Debian's busybox-static: no bash, no useradd, no GNU tools. */
export async function makeBusyboxRootfs(rootfs: string): Promise<void> {
  await baseRootfs(rootfs)
  await mkdir(path.join(rootfs, 'bin'))
  await copyFile('/bin/busybox', path.join(rootfs, 'bin/busybox'))
  await chmod(path.join(rootfs, 'bin/busybox'), 0o755)
  const { stdout } = await execFileAsync('/bin/busybox', ['--list'])
  for (const applet of stdout.split('\n').filter((name) => name && name !== 'busybox')) {
    await symlink('busybox', path.join(rootfs, 'bin', applet))
  }
}

/** The GNU tools the steps may use, with bash, dash as sh, useradd and passwd. */
const GNU_TOOLS = [
  '/usr/bin/bash',
  '/usr/bin/dash',
  '/usr/bin/cp',
  '/usr/bin/mv',
  '/usr/bin/rm',
  '/usr/bin/mkdir',
  '/usr/bin/chown',
  '/usr/bin/chmod',
  '/usr/bin/ln',
  '/usr/bin/ls',
  '/usr/bin/cat',
  '/usr/bin/mktemp',
  '/usr/bin/find',
  '/usr/bin/tar',
  '/usr/bin/id',
  '/usr/bin/touch',
  '/usr/bin/readlink',
  '/usr/sbin/useradd',
  '/usr/sbin/usermod',
  '/usr/bin/passwd',
]

/**
 * A merged-/usr rootfs of GNU coreutils, findutils, tar, bash, dash and shadow's useradd, copied
 * with the libraries `ldd` names: Debian's userland without the rest of it (`/bin/sh` is dash),
 * or Fedora's shape of it (`/bin/sh` is bash).
 */
export async function makeGnuRootfs(rootfs: string, sh: 'dash' | 'bash' = 'dash'): Promise<void> {
  for (const dir of ['usr/bin', 'usr/sbin', 'usr/lib', 'usr/lib64']) {
    await mkdir(path.join(rootfs, dir), { recursive: true })
  }
  for (const link of ['bin', 'sbin', 'lib', 'lib64'])
    await symlink(`usr/${link}`, path.join(rootfs, link))
  await baseRootfs(rootfs)
  const libraries = new Set<string>()
  for (const tool of GNU_TOOLS) {
    await copyFile(tool, path.join(rootfs, tool))
    await chmod(path.join(rootfs, tool), 0o755)
    const { stdout } = await execFileAsync('ldd', [tool])
    for (const match of stdout.matchAll(/(\/\S+)/g)) if (match[1]) libraries.add(match[1])
  }
  for (const library of libraries) {
    await mkdir(path.join(rootfs, path.dirname(library)), { recursive: true })
    await copyFile(library, path.join(rootfs, library))
  }
  await symlink(sh, path.join(rootfs, 'usr/bin/sh'))
  await copyFile('/etc/login.defs', path.join(rootfs, 'etc/login.defs'))
}
