import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BuildStep } from '../../../src/builder/index.js'
import {
  applyStep,
  type BuildContext,
  finalizeTemplate,
  StepError,
  type StepSandbox,
  type StepTools,
} from '../../../src/builder/steps/index.js'
import { chrootSandbox, makeBusyboxRootfs, makeGnuRootfs, readAccount } from './chroot-sandbox.js'

const execFileAsync = promisify(execFile)

// Everything this file makes lives under one `sbt-steps-` directory, removed in afterAll.
let scratch = ''

beforeAll(async () => {
  scratch = await mkdtemp(`/tmp/sbt-steps-${randomBytes(3).toString('hex')}-`)
})

afterAll(async () => {
  if (scratch !== '') await rm(scratch, { recursive: true, force: true })
})

/** gzip tar archives by hash, made from a context directory as the SDK makes them (§2.3). */
class ArchiveFiles {
  private readonly archives = new Map<string, Buffer>()

  async add(hash: string, context: string, paths: string[]): Promise<void> {
    const file = path.join(scratch, `${hash}.tar.gz`)
    await execFileAsync('tar', ['-czf', file, '--no-recursion', '-C', context, ...paths])
    this.archives.set(hash, await readFile(file))
  }

  async read(hash: string): Promise<Buffer> {
    const archive = this.archives.get(hash)
    if (!archive) throw new Error(`no archive ${hash}`)
    return archive
  }
}

const hashOf = (name: string) => name.padEnd(64, '0')

describe.each([
  { flavour: 'busybox only', make: makeBusyboxRootfs },
  { flavour: 'GNU userland', make: (dir: string) => makeGnuRootfs(dir, 'dash') },
  { flavour: 'GNU userland with bash as sh', make: (dir: string) => makeGnuRootfs(dir, 'bash') },
])('steps in a $flavour rootfs', ({ flavour, make }) => {
  let rootfs = ''
  let sandbox: StepSandbox
  const files = new ArchiveFiles()
  const output: string[] = []
  let tools: StepTools
  let context: BuildContext = { user: 'root', workdir: undefined, env: {} }
  const inRoot = (file: string) => path.join(rootfs, file)
  const apply = async (step: Omit<BuildStep, 'force'>) => {
    context = await applyStep({ force: false, ...step }, context, tools)
    return context
  }
  const uidOf = async (name: string) => (await readAccount(rootfs, name))?.uid

  beforeAll(async () => {
    rootfs = await mkdtemp(path.join(scratch, 'rootfs-'))
    await make(rootfs)
    sandbox = chrootSandbox(rootfs)
    tools = { sandbox, files, onOutput: (line) => output.push(line) }

    // A build context as a user's project has it: files, a directory with a hidden file, a
    // symlink, nested sources, and names a shell would misread.
    const project = await mkdtemp(path.join(scratch, 'context-'))
    await mkdir(path.join(project, 'app/sub'), { recursive: true })
    await writeFile(path.join(project, 'app/main.sh'), 'echo main\n', { mode: 0o755 })
    await writeFile(path.join(project, 'app/.hidden'), 'hidden\n')
    await writeFile(path.join(project, 'app/sub/deep.txt'), 'deep\n')
    await symlink('main.sh', path.join(project, 'app/link'))
    await writeFile(path.join(project, 'config.json'), '{}\n', { mode: 0o600 })
    await mkdir(path.join(project, 'src/lib'), { recursive: true })
    await writeFile(path.join(project, 'src/a.ts'), 'a\n')
    await writeFile(path.join(project, 'src/lib/b.ts'), 'b\n')
    await writeFile(path.join(project, '$(touch PWNED) a b.txt'), 'odd\n')
    await files.add(hashOf('app'), project, [
      'app',
      'app/.hidden',
      'app/link',
      'app/main.sh',
      'app/sub',
      'app/sub/deep.txt',
    ])
    await files.add(hashOf('config'), project, ['config.json'])
    await files.add(hashOf('glob'), project, ['src/a.ts', 'src/lib', 'src/lib/b.ts'])
    await files.add(hashOf('odd'), project, ['$(touch PWNED) a b.txt'])
  })

  it('USER creates a user with a home and passwordless sudo, and makes it the context user', async () => {
    await apply({ type: 'USER', args: ['builder', 'true'] })
    expect(context.user).toBe('builder')
    const account = await readAccount(rootfs, 'builder')
    expect(account?.uid).toBeGreaterThanOrEqual(1000)
    expect(account?.home).toBe('/home/builder')
    expect((await stat(inRoot('home/builder'))).uid).toBe(account?.uid)
    expect(await readFile(inRoot('home/builder/.profile'), 'utf8')).toBe('# from skel\n')
    expect(await readFile(inRoot('etc/group'), 'utf8')).toMatch(/^builder:[^:]*:\d+:/m)
    const sudoers = inRoot('etc/sudoers.d/sandbar-builder')
    expect(await readFile(sudoers, 'utf8')).toBe('builder ALL=(ALL:ALL) NOPASSWD: ALL\n')
    expect((await stat(sudoers)).mode & 0o7777).toBe(0o440)
  })

  it('USER of an existing user changes only the context', async () => {
    const passwd = await readFile(inRoot('etc/passwd'), 'utf8')
    await apply({ type: 'user', args: ['root'] })
    await apply({ type: 'USER', args: ['builder'] })
    expect(context.user).toBe('builder')
    expect(await readFile(inRoot('etc/passwd'), 'utf8')).toBe(passwd)
  })

  it('USER joins an existing group of its name instead of failing on it', async () => {
    const group = await readFile(inRoot('etc/group'), 'utf8')
    await writeFile(inRoot('etc/group'), `${group}svc:x:4242:\n`)
    await apply({ type: 'USER', args: ['svc'] })
    expect((await readAccount(rootfs, 'svc'))?.gid).toBe(4242)
    await apply({ type: 'USER', args: ['builder'] })
  })

  it('COPY with no workdir lands relative to the user home, owned by the user, with the mode', async () => {
    await apply({
      type: 'COPY',
      args: ['config.json', 'conf/', '', '0644'],
      filesHash: hashOf('config'),
    })
    const copied = await stat(inRoot('home/builder/conf/config.json'))
    expect(copied.mode & 0o7777).toBe(0o644)
    expect(copied.uid).toBe(await uidOf('builder'))
    expect((await stat(inRoot('home/builder/conf'))).uid).toBe(await uidOf('builder'))
    expect(await readdir(inRoot('tmp'))).toEqual([])
  })

  it('WORKDIR creates the missing directories for the context user from the first new one down', async () => {
    await apply({ type: 'WORKDIR', args: ['/srv/www/site'] })
    expect(context.workdir).toBe('/srv/www/site')
    expect((await stat(inRoot('srv'))).uid).toBe(await uidOf('builder'))
    expect((await stat(inRoot('srv/www/site'))).uid).toBe(await uidOf('builder'))
    await apply({ type: 'WORKDIR', args: ['../api'] })
    expect(context.workdir).toBe('/srv/www/api')
    expect((await stat(inRoot('/'))).uid).toBe(0)
  })

  it('COPY of a directory merges its contents, hidden files and symlinks into an existing one', async () => {
    await mkdir(inRoot('opt/app/sub'), { recursive: true, mode: 0o700 })
    await writeFile(inRoot('opt/app/keep.txt'), 'kept\n')
    await writeFile(inRoot('opt/app/main.sh'), 'old\n')
    await apply({
      type: 'COPY',
      args: ['app', '/opt/app', 'root:root', ''],
      filesHash: hashOf('app'),
    })
    expect(await readFile(inRoot('opt/app/main.sh'), 'utf8')).toBe('echo main\n')
    expect((await stat(inRoot('opt/app/main.sh'))).mode & 0o777).toBe(0o755)
    expect(await readFile(inRoot('opt/app/keep.txt'), 'utf8')).toBe('kept\n')
    expect(await readFile(inRoot('opt/app/.hidden'), 'utf8')).toBe('hidden\n')
    expect(await readFile(inRoot('opt/app/sub/deep.txt'), 'utf8')).toBe('deep\n')
    expect((await stat(inRoot('opt/app/sub'))).mode & 0o777).toBe(0o700)
    expect(await readlink(inRoot('opt/app/link'))).toBe('main.sh')
  })

  it('COPY gives new entries to the owner, symlinks themselves included, and chmods only them', async () => {
    await apply({
      type: 'COPY',
      args: ['app', 'copy', 'builder', '0750'],
      filesHash: hashOf('app'),
    })
    const uid = await uidOf('builder')
    for (const entry of ['copy', 'copy/main.sh', 'copy/sub/deep.txt', 'copy/link']) {
      expect((await lstat(inRoot(`srv/www/api/${entry}`))).uid).toBe(uid)
    }
    expect((await stat(inRoot('srv/www/api/copy/sub/deep.txt'))).mode & 0o777).toBe(0o750)
    expect((await lstat(inRoot('srv/www/api/copy/link'))).isSymbolicLink()).toBe(true)
  })

  it('COPY of a glob keeps the paths below its base', async () => {
    await apply({ type: 'COPY', args: ['src/**/*.ts', '/code-src/'], filesHash: hashOf('glob') })
    expect(await readFile(inRoot('code-src/a.ts'), 'utf8')).toBe('a\n')
    expect(await readFile(inRoot('code-src/lib/b.ts'), 'utf8')).toBe('b\n')
  })

  it('COPY of a file to a path renames it, and into an existing directory keeps its name', async () => {
    await apply({
      type: 'COPY',
      args: ['config.json', '/etc/app.json'],
      filesHash: hashOf('config'),
    })
    expect(await readFile(inRoot('etc/app.json'), 'utf8')).toBe('{}\n')
    await apply({ type: 'COPY', args: ['config.json', '/etc'], filesHash: hashOf('config') })
    expect(await readFile(inRoot('etc/config.json'), 'utf8')).toBe('{}\n')
  })

  it('COPY passes names a shell would misread as data, never as code', async () => {
    const name = '$(touch PWNED) a b.txt'
    const dest = '/tmp/x; touch /PWNED2 "$(touch /PWNED3)"/'
    await apply({ type: 'COPY', args: [name, dest], filesHash: hashOf('odd') })
    expect(await readFile(inRoot(`${dest}${name}`), 'utf8')).toBe('odd\n')
    for (const marker of ['PWNED', 'PWNED2', 'PWNED3', 'srv/www/api/PWNED']) {
      await expect(stat(inRoot(marker))).rejects.toThrow('ENOENT')
    }
    await rm(inRoot('tmp/x; touch '), { recursive: true })
    expect(await readdir(inRoot('tmp'))).toEqual([])
  })

  it('COPY names what went wrong', async () => {
    await expect(
      apply({ type: 'COPY', args: ['missing', '/x'], filesHash: hashOf('config') }),
    ).rejects.toThrow(
      /^COPY missing \/x failed \(exit code 1\): missing is not among the uploaded files$/,
    )
    await expect(
      apply({
        type: 'COPY',
        args: ['config.json', '/x', 'nobody-here'],
        filesHash: hashOf('config'),
      }),
    ).rejects.toThrow(/^COPY config.json \/x failed \(exit code 1\): .*nobody-here/s)
    expect(await readdir(inRoot('tmp'))).toEqual([])
  })

  it('RUN runs as the context user in the workdir with the context env', async () => {
    await apply({ type: 'ENV', args: ['GREETING', 'hello $USER', 'PATH', '/opt/bin:$PATH'] })
    output.length = 0
    await apply({ type: 'RUN', args: ['echo "$GREETING from $(id -un) in $(pwd)"; echo "$PATH"'] })
    expect(output).toEqual([
      'hello builder from builder in /srv/www/api',
      '/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    ])
    output.length = 0
    await apply({ type: 'RUN', args: ['id -u', 'root'] })
    expect(output).toEqual(['0'])
  })

  const hasBash = flavour !== 'busybox only'
  it(`RUN uses ${hasBash ? 'bash as a login shell' : 'sh, having no bash'}`, async () => {
    output.length = 0
    await apply({
      type: 'RUN',
      args: [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
        'if [ -n "${BASH_VERSION:-}" ]; then echo bash; shopt -q login_shell && echo login; else echo sh; fi',
      ],
    })
    expect(output).toEqual(hasBash ? ['bash', 'login'] : ['sh'])
  })

  it('WORKDIR expands the context env, as Docker does', async () => {
    const before = context.workdir
    await apply({ type: 'WORKDIR', args: ['$HOME/projects'] })
    expect(context.workdir).toBe('/home/builder/projects')
    expect((await stat(inRoot('home/builder/projects'))).uid).toBe(await uidOf('builder'))
    context = { ...context, workdir: before }
  })

  it('RUN that exits non-zero is a StepError naming the exit code', async () => {
    const failure = apply({ type: 'RUN', args: ['exit 3'] })
    await expect(failure).rejects.toBeInstanceOf(StepError)
    await expect(failure).rejects.toThrow("RUN command 'exit 3' exited with code 3")
  })

  it('finalize makes user `user` (uid 1000 when free), its home and sudo, /usr/local and /code', async () => {
    await finalizeTemplate(sandbox)
    const account = await readAccount(rootfs, 'user')
    expect(account?.home).toBe('/home/user')
    expect((await stat(inRoot('home/user'))).uid).toBe(account?.uid)
    expect((await stat(inRoot('home/user/.profile'))).uid).toBe(account?.uid)
    expect(await readFile(inRoot('etc/sudoers.d/sandbar-user'), 'utf8')).toBe(
      'user ALL=(ALL:ALL) NOPASSWD: ALL\n',
    )
    expect((await stat(inRoot('code'))).mode & 0o777).toBe(0o777)
    expect((await stat(inRoot('usr/local/bin'))).mode & 0o777).toBe(0o777)
    expect(await readFile(inRoot('etc/shadow'), 'utf8')).toMatch(/^user::/m)
    // Again on its own output: nothing to do, nothing fails.
    await finalizeTemplate(sandbox)
  })

  it('finalize gives user uid 1000 on a fresh rootfs', async () => {
    const fresh = await mkdtemp(path.join(scratch, 'fresh-'))
    await make(fresh)
    await finalizeTemplate(chrootSandbox(fresh))
    expect((await readAccount(fresh, 'user'))?.uid).toBe(1000)
  })
})
