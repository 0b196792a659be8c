import { randomBytes } from 'node:crypto'
import { CommandExitError } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxInfo } from '../../src/agent/index.js'
import { readHostLimits } from '../../src/agent/limits/host-limits.js'
import { pidsBudget } from '../../src/agent/limits/parent-cgroup.js'
import { readCgroupMode } from '../../src/agent/runtime/cgroup-mode.js'
import { SANDBOX_NOFILE } from '../../src/agent/runtime/oci-spec.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { EXPECTED_PROBE_RESULTS, SYSCALL_PROBE } from '../support/syscall-probe.js'
import { baseTemplate, readRecord, startTestAgent, type TestAgent } from './agent-fixture.js'
import { readParentLimits } from './cgroup-probe.js'

const sandboxID = () => `i${randomBytes(10).toString('hex')}`
const MiB = 1024 * 1024

/** How many processes a sandbox's /proc shows, as the sandbox's user or as root. */
async function processCount(
  sandbox: ReturnType<typeof sandboxForEnvd>,
  options: { user?: 'root'; timeoutMs?: number } = {},
): Promise<number> {
  return Number((await sandbox.commands.run('ls /proc | grep -c "^[0-9]"', options)).stdout)
}

function request(id: string) {
  return {
    sandboxID: id,
    template: baseTemplate(),
    cpuCount: 1,
    memoryMB: 256,
    diskSizeMB: 512,
    envVars: { SBT_FROM_INIT: 'yes' },
    egress: { allowOut: [], denyOut: [] },
  }
}

let test: TestAgent
let info: SandboxInfo

beforeAll(async () => {
  test = await startTestAgent()
  info = await test.agent.create(request(sandboxID()))
})

afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

describe('a sandbox on the agent', () => {
  it('runs commands through envd as user and as root, with the E2B variables', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const asUser = await sandbox.commands.run('echo "$(id -un):$(pwd):$SBT_FROM_INIT:$E2B_SANDBOX"')
    expect(asUser.stdout).toBe('user:/home/user:yes:true\n')
    const asRoot = await sandbox.commands.run('id -u; echo $E2B_SANDBOX_ID', { user: 'root' })
    expect(asRoot.stdout).toBe(`0\n${info.sandboxID}\n`)
    const sudo = await sandbox.commands.run('sudo -n id -u')
    expect(sudo.stdout).toBe('0\n')
  })

  it('reads and writes files as the user, with the base template tools', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    await sandbox.files.write('/home/user/hello.py', 'print("hello from python")')
    expect((await sandbox.files.getInfo('/home/user/hello.py')).owner).toBe('user')
    const result = await sandbox.commands.run(
      'python3 hello.py && node -e "console.log(1+1)" && git --version',
    )
    expect(result.stdout).toMatch(/^hello from python\n2\ngit version /)
  })

  it('cannot see host processes or files, and root inside is unprivileged outside', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    expect(await processCount(sandbox)).toBeLessThan(15)
    const hostOnly = await sandbox.commands.run(
      `test -e ${test.config.dataDir} && echo visible || echo hidden`,
    )
    expect(hostOnly.stdout).toBe('hidden\n')
    const write = sandbox.commands.run('touch /.sandbar/sbt-escape', { user: 'root' })
    await expect(write).rejects.toBeInstanceOf(CommandExitError)
    const uidMap = await sandbox.commands.run('cat /proc/self/uid_map', { user: 'root' })
    const record = await readRecord(test.config.dataDir, info.sandboxID)
    expect(uidMap.stdout.trim().split(/\s+/)).toEqual(['0', String(record.idMap.hostID), '65536'])
  })

  it("sees its own network devices in /sys, not the host's or other sandboxes'", async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const sys = await sandbox.commands.run(
      'ls /sys/class/net /sys/devices/virtual/net /sys/fs/cgroup | tr "\\n" " "',
    )
    expect(sys.stdout).toBe(
      '/sys/class/net: eth0 lo  /sys/devices/virtual/net: eth0 lo  /sys/fs/cgroup: ',
    )
    // Host paths left in mountinfo: the overlay's layer, upper and work directories, and the
    // sources of the toolbox bind and the boot ID's (named only where their file system's root
    // is the host's `/`); /sys and every other mount name none.
    const mountinfo = await sandbox.commands.run('cat /proc/self/mountinfo')
    const hostPaths = [test.config.dataDir, test.config.templatesDir ?? test.config.dataDir]
    const naming = mountinfo.stdout
      .split('\n')
      .filter((line) => hostPaths.some((path) => line.includes(path)))
      .map((line) => line.split(' ')[4])
    expect(naming).toContain('/')
    const expected = new Set<string | undefined>([
      '/',
      '/.sandbar',
      '/proc/sys/kernel/random/boot_id',
    ])
    expect(naming.filter((mountPoint) => !expected.has(mountPoint))).toEqual([])
  })

  it('refuses nested namespaces, mounts and io_uring to the user and to root', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    await sandbox.files.write('/tmp/syscall-probe.py', SYSCALL_PROBE)
    for (const user of ['user', 'root'] as const) {
      const probe = await sandbox.commands.run('python3 /tmp/syscall-probe.py', { user })
      expect(JSON.parse(probe.stdout)).toEqual(EXPECTED_PROBE_RESULTS)
      // The road from a user namespace of one's own to the kernel's network code.
      const nested = await sandbox.commands.run(
        'unshare -Urn ip link add sbt0 type dummy; echo "exit $?"; unshare -m true; echo "exit $?"',
        { user },
      )
      expect(nested.stdout).toBe('exit 1\nexit 1\n')
      expect(nested.stderr).toBe('unshare: unshare failed: Operation not permitted\n'.repeat(2))
    }
  })

  it('keeps what users need under the seccomp profile: sudo, runtimes, git, ps, top, a pty', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const tools = await sandbox.commands.run(
      [
        'sudo -n true',
        'python3 -c "import threading, subprocess; print(subprocess.run([\'true\']).returncode)"',
        "node -e \"require('node:worker_threads'); require('node:fs').watch('/tmp').close(); console.log(2)\"",
        'git init -q /tmp/repo && git -C /tmp/repo status --short && echo 3',
        'ps -e > /dev/null && top -bn1 > /dev/null && echo 4',
      ].join(' && '),
    )
    expect(tools.stdout).toBe('0\n2\n3\n4\n')
    let output = ''
    const terminal = await sandbox.pty.create({
      cols: 80,
      rows: 24,
      onData: (data) => {
        output += new TextDecoder().decode(data)
      },
    })
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('tty; exit\n'))
    expect((await terminal.wait()).exitCode).toBe(0)
    expect(output).toContain('/dev/pts/')
  })

  it('bounds open files per process; no core dumps', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const limits = await sandbox.commands.run('ulimit -n; ulimit -Hn; ulimit -c; ulimit -Hc')
    expect(limits.stdout).toBe(`${SANDBOX_NOFILE}\n${SANDBOX_NOFILE}\n0\n0\n`)
    await sandbox.files.write(
      '/tmp/fill-fds.py',
      [
        'import errno, os, resource',
        'fds = []',
        'try:',
        "    while True: fds.append(os.open('/dev/null', os.O_RDONLY))",
        'except OSError as error: print(errno.errorcode[error.errno], max(fds) + 1)',
        'try: resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))',
        "except ValueError: print('raise refused')",
      ].join('\n'),
    )
    const fill = await sandbox.commands.run('python3 /tmp/fill-fds.py')
    expect(fill.stdout).toBe(`EMFILE ${SANDBOX_NOFILE}\nraise refused\n`)
  })

  it('gives all sandboxes one pids budget below pid_max and less CPU weight than the host', async () => {
    const host = await readHostLimits()
    const parent = await readParentLimits(`/sandbar-${test.config.prefix}`)
    expect(parent.pids).toBe(pidsBudget(host.pidMax, host.threadsMax))
    expect(parent.pids).toBeLessThan(host.pidMax)
    const v2 = (await readCgroupMode()).kind === 'v2'
    expect(parent.cpuWeight).toBe(v2 ? '50' : '512')
  })

  it('survives a fork bomb: the pids limit holds', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const bomb = await sandbox.commands.run('bomb() { bomb | bomb & }; bomb', {
      background: true,
      timeoutMs: 3_000,
    })
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const count = await processCount(sandbox, { user: 'root', timeoutMs: 10_000 }).catch(
      () => undefined,
    )
    if (count !== undefined) expect(count).toBeLessThanOrEqual(test.config.pidsLimit + 5)
    await bomb.kill()
    await expect
      .poll(
        async () =>
          (await sandbox.commands.run('echo alive', { timeoutMs: 5_000 }).catch(() => undefined))
            ?.stdout,
        { timeout: 30_000, interval: 500 },
      )
      .toBe('alive\n')
    // Every process of the bomb goes once it is killed; its last ones take a while.
    await expect
      .poll(() => processCount(sandbox, { user: 'root' }), { timeout: 30_000, interval: 500 })
      .toBeLessThan(20)
  })

  it('reports its use of CPU, memory and disk, read on the host', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const usage = async () => {
      const now = await test.agent.usage(info.sandboxID)
      if (now === undefined) throw new Error('no usage of a running sandbox')
      return now
    }
    const before = await usage()
    expect(before).toMatchObject({ cpuCount: 1, memTotal: 256 * MiB, startedAt: info.createdAt })
    expect(before.memUsed).toBeGreaterThan(0)
    expect(before.diskUsed).toBeLessThan(before.diskTotal)
    await sandbox.commands.run('head -c 33554432 /dev/urandom > /home/user/usage.bin')
    // A second of CPU time (however slow the host), then 64 MiB held until killed.
    await sandbox.files.write(
      '/home/user/hold.py',
      'import time\nwhile time.process_time() < 1: pass\nx = bytearray(b"1" * (64 << 20))\nprint("held", flush=True)\ntime.sleep(600)\n',
    )
    let held: () => void = () => {}
    const holding = new Promise<void>((resolve) => {
      held = resolve
    })
    const holder = await sandbox.commands.run('python3 /home/user/hold.py', {
      background: true,
      timeoutMs: 0,
      onStdout: (data) => {
        if (data.includes('held')) held()
      },
    })
    try {
      await holding
      const during = await usage()
      expect(during.cpuTimeUs - before.cpuTimeUs).toBeGreaterThanOrEqual(1_000_000)
      expect(during.diskUsed - before.diskUsed).toBeGreaterThanOrEqual(32 * MiB)
      expect(during.memUsed).toBeLessThan(during.memTotal)
      // Measured as the drop when the holder goes: the memory other processes release meanwhile
      // (a busy host frees the last test's leftovers late) only adds to a drop, never hides one.
      await holder.kill()
      await expect
        .poll(async () => during.memUsed - (await usage()).memUsed, { timeout: 60_000 })
        .toBeGreaterThan(64 * MiB)
    } finally {
      await holder.kill()
      await sandbox.commands.run('rm /home/user/usage.bin /home/user/hold.py')
    }
  })

  it('OOM-kills a memory hog, not envd', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const hog = sandbox.commands.run(
      'python3 -c "x = bytearray(1024 * 1024 * 1024); print(len(x))"',
    )
    await expect(hog).rejects.toMatchObject({ exitCode: -1, error: 'signal: killed' })
    expect((await sandbox.commands.run('echo still here')).stdout).toBe('still here\n')
  })

  it('pause stops a counter and resume continues it', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    await sandbox.commands.run(
      'i=0; while true; do i=$((i+1)); echo $i > /tmp/counter.t; mv /tmp/counter.t /tmp/counter; sleep 0.05; done',
      {
        background: true,
        timeoutMs: 0,
      },
    )
    const upper = `${test.config.dataDir}/sandboxes/${info.sandboxID}/disk/upper/tmp/counter`
    const { readFile } = await import('node:fs/promises')
    // Counting, however slow the start (an emulated guest takes seconds to start bash -l).
    await expect
      .poll(() => readFile(upper, 'utf8').then(Number, () => 0), { timeout: 30_000 })
      .toBeGreaterThan(1)
    await test.agent.pause(info.sandboxID)
    expect((await test.agent.get(info.sandboxID))?.state).toBe('paused')
    expect(await test.agent.usage(info.sandboxID)).toBeUndefined()
    const frozen = await readFile(upper, 'utf8')
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await readFile(upper, 'utf8')).toBe(frozen)
    await test.agent.resume(info.sandboxID)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(Number(await readFile(upper, 'utf8'))).toBeGreaterThan(Number(frozen))
  })

  it('kill removes the sandbox and everything it had', async () => {
    const other = await test.agent.create(request(sandboxID()))
    await test.agent.kill(other.sandboxID)
    expect(await test.agent.get(other.sandboxID)).toBeUndefined()
    const healthy = await fetch(`${other.envdURL}/health`, {
      signal: AbortSignal.timeout(1_000),
    }).then(
      () => true,
      () => false,
    )
    expect(healthy).toBe(false)
  })
})

describe('concurrent creates', () => {
  it('give every sandbox its own address, and an existing ID is refused', async () => {
    const ids = [sandboxID(), sandboxID(), sandboxID()]
    const created = await Promise.all(ids.map((id) => test.agent.create(request(id))))
    const addresses = new Set(created.map((sandbox) => sandbox.address))
    expect(addresses.size).toBe(ids.length)
    expect(addresses.has(info.address)).toBe(false)
    await expect(test.agent.create(request(ids[0] ?? ''))).rejects.toThrow('already exists')
    expect((await test.agent.get(ids[0] ?? ''))?.state).toBe('running')
    for (const id of ids) await test.agent.kill(id)
  })
})

describe('a create whose envd dies while starting', () => {
  it('fails at once when the sandbox stops before envd answers, leaving nothing', async () => {
    const id = sandboxID()
    const started = Date.now()
    // 8 MiB: the kernel kills envd's node while it starts, and the sandbox's init ends with it.
    const create = test.agent.create({ ...request(id), memoryMB: 8 })
    await expect(create).rejects.toThrow('the sandbox stopped before envd answered')
    // The agent waits up to 15 s for envd; the container's end is seen within a second or two.
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(await test.agent.get(id)).toBeUndefined()
  })
})
