import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { cgroupFreezer } from '../../src/agent/runtime/cgroup-freezer.js'
import { readCgroupMode } from '../../src/agent/runtime/cgroup-mode.js'
import { compileExecLoop } from '../support/exec-loop.js'
import { makeTempDir, removeTempDir, testPrefix } from './runtime-fixture.js'

// A pause is a freeze of the sandbox's cgroup, and what runs in the cgroup is the tenant's: it
// must not be able to keep its sandbox from pausing, nor leave it half frozen.

/**
 * Starts threads and then execs itself, for ever: each exec waits in the kernel for its
 * threads to exit. On a cgroup v1 freezer, threads frozen first never exit, and the exec waits
 * in uninterruptible sleep, which no freeze can take: the freeze stays FREEZING.
 */
const EXEC_LOOP = `
import os, sys, threading, time
for _ in range(4):
    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()
os.execv(sys.executable, [sys.executable, __file__])
`

let prefix = ''
let tempDir = ''
/** The test's cgroup, as an OCI `cgroupsPath`, and its directory in the freezer hierarchy. */
let cgroupsPath = ''
let cgroupDir = ''
let unified = false
let children: ChildProcess[] = []

beforeEach(async () => {
  prefix = testPrefix()
  tempDir = await makeTempDir(`sbt-freezer-${prefix}`)
  cgroupsPath = `/${prefix}-freezer`
  unified = (await readCgroupMode()).kind === 'v2'
  cgroupDir = join(unified ? '/sys/fs/cgroup' : '/sys/fs/cgroup/freezer', cgroupsPath)
  await mkdir(cgroupDir)
  children = []
})

afterEach(async () => {
  // Thawed first: a frozen process does not die.
  await thaw()
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    }
  }
  await removeCgroup()
  await removeTempDir(tempDir)
})

async function thaw(): Promise<void> {
  const [file, value] = unified ? ['cgroup.freeze', '0'] : ['freezer.state', 'THAWED']
  await writeFile(join(cgroupDir, file), value)
}

/** rmdir once the killed processes have left the cgroup. */
async function removeCgroup(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rmdir(cgroupDir)
      return
    } catch (error) {
      if (attempt === 100) throw error
      await sleep(20)
    }
  }
}

/** Starts `argv` on the host and moves it into the test's cgroup. */
async function startInCgroup(argv: string[]): Promise<ChildProcess> {
  const [file = '', ...args] = argv
  const child = spawn(file, args, { stdio: 'ignore' })
  children.push(child)
  if (child.pid === undefined) throw new Error(`${file} did not start`)
  await writeFile(join(cgroupDir, 'cgroup.procs'), String(child.pid))
  return child
}

/** A busy loop on the host, outside the test's cgroup, which `afterEach` ends. */
function startBusyLoop(): void {
  children.push(spawn('/bin/sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }))
}

/** What the freezer file reports: v1's `freezer.state`, or v2's `frozen` event as 0 or 1. */
async function freezerReport(): Promise<string> {
  if (!unified) {
    return (await readFile(join(cgroupDir, 'freezer.state'), 'utf8')).trim()
  }
  const events = await readFile(join(cgroupDir, 'cgroup.events'), 'utf8')
  return events.includes('frozen 1') ? 'FROZEN' : 'THAWED'
}

/** Freezes and thaws the test's cgroup 40 times, checking what the kernel reports each time. */
async function freezeAndThawRepeatedly(): Promise<void> {
  const freezer = await cgroupFreezer(cgroupsPath)
  for (let round = 0; round < 40; round++) {
    await freezer.setFrozen(true)
    expect(await freezerReport()).toBe('FROZEN')
    await freezer.setFrozen(false)
    expect(await freezerReport()).toBe('THAWED')
  }
}

describe('the cgroup freezer a pause uses', () => {
  it('freezes processes that exec while they have threads, every time', async () => {
    const script = join(tempDir, 'exec-loop.py')
    await writeFile(script, EXEC_LOOP)
    // At the lowest priority, beside a busy loop for each core: a tenant short of CPU on a busy
    // host, whose threads take long to reach the freezer, and longer to exit after a thaw.
    for (let copy = 0; copy < 8; copy++) {
      await startInCgroup(['nice', '-n', '19', '/usr/bin/python3', script])
    }
    for (let core = 0; core < availableParallelism(); core++) startBusyLoop()
    await sleep(300)
    // Without the thaw, a few rounds in a freeze stuck for good (not frozen after 5000 ms).
    // Thawed too soon after, or at every slow try, a few rounds ran out of time.
    await freezeAndThawRepeatedly()
  })

  it('freezes a compiled program that starts threads and execs itself without pause', async () => {
    const program = await compileExecLoop(tempDir)
    for (let copy = 0; copy < 8; copy++) await startInCgroup([program])
    await sleep(300)
    // A freezer that thawed for 1 ms and tried again timed out on this within the first rounds.
    await freezeAndThawRepeatedly()
  })
})
