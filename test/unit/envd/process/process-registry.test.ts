import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { exitStatus } from '../../../../src/envd/process/exit-status.js'
import type { ManagedProcess } from '../../../../src/envd/process/managed-process.js'
import { ProcessOutput } from '../../../../src/envd/process/process-output.js'
import { ProcessRegistry } from '../../../../src/envd/process/process-registry.js'

/** A registry entry; the registry only reads pid, tag and output. */
function entry(pid: number, tag?: string): ManagedProcess {
  const refuse = (): never => {
    throw new Error('not used by the registry')
  }
  return {
    pid,
    tag,
    config: { cmd: 'x', args: [], envs: {}, cwd: undefined },
    output: new ProcessOutput(1024),
    writeStdin: refuse,
    writePty: refuse,
    closeStdin: refuse,
    resize: refuse,
    signal: refuse,
  }
}

describe('ProcessRegistry', () => {
  it('finds processes by pid and tag and lists only running ones', () => {
    const registry = new ProcessRegistry(60_000)
    const running = entry(10, 'web')
    const ended = entry(11, 'job')
    registry.add(running)
    registry.add(ended)
    ended.output.finish(exitStatus({ code: 0 }))
    expect(registry.byPid(10)).toBe(running)
    expect(registry.byTag('job')).toBe(ended)
    expect(registry.running()).toEqual([running])
  })

  it('prefers the running process among several with one tag', () => {
    const registry = new ProcessRegistry(60_000)
    const old = entry(20, 'svc')
    const current = entry(21, 'svc')
    registry.add(current)
    registry.add(old)
    old.output.finish(exitStatus({ code: 1 }))
    expect(registry.byTag('svc')).toBe(current)
  })

  it('forgets an ended process after the retention period', async () => {
    const registry = new ProcessRegistry(30)
    const process = entry(30)
    registry.add(process)
    process.output.finish(exitStatus({ code: 0 }))
    expect(registry.byPid(30)).toBe(process)
    await sleep(80)
    expect(registry.byPid(30)).toBeUndefined()
  })
})
