import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { MountEntry } from '../../../src/agent/rootfs/mountinfo.js'
import { cpuUsedPercent, readSandboxUsage } from '../../../src/agent/sandbox-usage.js'

const MiB = 1024 * 1024
const CGROUP = '/sbt-parent/isandbox'
const dirs: string[] = []

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A cgroup hierarchy in a temporary directory, with `files` in the sandbox's cgroup. */
async function hierarchy(fsType: string, superOptions: string, files: Record<string, string>) {
  const mountPoint = await mkdtemp('/tmp/sbt-cgroup-')
  dirs.push(mountPoint)
  const dir = path.join(mountPoint, CGROUP)
  await mkdir(dir, { recursive: true })
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text)
  return {
    device: '0:1',
    mountPoint,
    mountOptions: 'rw',
    fsType,
    source: fsType,
    superOptions,
  } satisfies MountEntry
}

const source = {
  cgroupPath: CGROUP,
  startedAt: new Date(0),
  disk: '/',
  cpuCount: 2,
  memoryMB: 512,
}

describe('readSandboxUsage', () => {
  it('reads cgroup v2: memory.current less the file cache, cpu.stat usage_usec', async () => {
    const unified = await hierarchy('cgroup2', 'rw', {
      'memory.current': `${100 * MiB}\n`,
      'memory.stat': `anon ${70 * MiB}\nfile ${30 * MiB}\nfile_mapped 0\n`,
      'cpu.stat': 'usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n',
    })
    expect(readSandboxUsage([unified], source)).toMatchObject({
      cpuTimeUs: 1_500_000,
      cpuCount: 2,
      memUsed: 70 * MiB,
      memTotal: 512 * MiB,
      memCache: 30 * MiB,
    })
  })

  it('reads cgroup v1 from the memory and cpuacct hierarchies, wherever they are mounted', async () => {
    const mounts = [
      await hierarchy('cgroup', 'rw,cpu', {}),
      await hierarchy('cgroup', 'rw,memory', {
        'memory.usage_in_bytes': `${90 * MiB}\n`,
        'memory.stat': `cache ${1 * MiB}\nrss 0\ntotal_cache ${40 * MiB}\ntotal_rss ${50 * MiB}\n`,
      }),
      await hierarchy('cgroup', 'rw,cpuacct', { 'cpuacct.usage': '2500000999\n' }),
    ]
    const usage = readSandboxUsage(mounts, source)
    expect(usage).toMatchObject({ cpuTimeUs: 2_500_000, memUsed: 50 * MiB, memCache: 40 * MiB })
    expect(usage?.diskTotal).toBeGreaterThan(0)
  })

  it('gives nothing for a sandbox whose cgroups are not on the host', async () => {
    const unified = await hierarchy('cgroup2', 'rw', {})
    expect(readSandboxUsage([unified], source)).toBeUndefined()
  })
})

describe('cpuUsedPercent', () => {
  it('is CPU time over wall time across the sandbox’s CPUs, within 0–100, to 2 decimals', () => {
    const at = 1_000_000
    expect(cpuUsedPercent({ cpuTimeUs: 0, at }, { cpuTimeUs: 1_000_000, at: at + 1000 }, 2)).toBe(
      50,
    )
    expect(cpuUsedPercent({ cpuTimeUs: 0, at }, { cpuTimeUs: 1_234, at: at + 1000 }, 1)).toBe(0.12)
    expect(cpuUsedPercent({ cpuTimeUs: 0, at }, { cpuTimeUs: 9e9, at: at + 1000 }, 1)).toBe(100)
    expect(cpuUsedPercent({ cpuTimeUs: 5, at }, { cpuTimeUs: 0, at: at + 1000 }, 1)).toBe(0)
    expect(cpuUsedPercent({ cpuTimeUs: 0, at }, { cpuTimeUs: 10, at }, 1)).toBe(0)
  })
})
