import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_CRIU_BINARY } from '../../src/agent/checkpoint/criu-args.js'
import { runHostCommand } from '../../src/agent/host-command.js'
import { cleanupOnInterrupt } from '../interrupt.js'
import { timeMs } from '../stats.js'

/**
 * A Python program that fills `heapMiB` of its heap with random bytes, writes `ready` to the
 * file its first argument names, and sleeps: the same in a sandbox and on the host.
 */
export function heapHolderScript(heapMiB: number): string {
  return [
    'import os, sys, time',
    `heap = bytearray(os.urandom(${heapMiB} * 1024 * 1024))`,
    "open(sys.argv[1], 'w').write('ready')",
    'time.sleep(1e9)',
  ].join('\n')
}

/**
 * The floor of a hibernation: plain `criu dump` and `criu restore` of the same Python process
 * run on the host in a session of its own, outside any container, by the CRIU Sandbar uses.
 */
export async function rawCriuSamples(count: number, heapMiB: number) {
  const dump: number[] = []
  const restore: number[] = []
  const imageBytes: number[] = []
  for (let i = 0; i < count; i++) {
    const dir = await mkdtemp('/tmp/sbt-bench-criu-')
    let restoredPid: number | undefined
    let holderPid: number | undefined
    // The dump ends the holder; a failed one leaves it, and its restore the restored one. Both
    // run in sessions of their own, which a Ctrl-C at the terminal does not reach.
    const removeAll = cleanupOnInterrupt(async () => {
      for (const pid of [holderPid, restoredPid]) {
        if (pid === undefined) continue
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // Already gone.
        }
      }
      await rm(dir, { recursive: true, force: true })
    })
    try {
      const ready = path.join(dir, 'ready')
      const holder = spawn('python3', ['-c', heapHolderScript(heapMiB), ready], {
        detached: true,
        stdio: 'ignore',
      })
      holder.unref()
      holderPid = holder.pid
      while ((await readFile(ready, 'utf8').catch(() => '')) !== 'ready') await sleep(10)
      const images = path.join(dir, 'images')
      await mkdir(images)
      const pid = String(holder.pid)
      dump.push(
        await timeMs(() =>
          runHostCommand(DEFAULT_CRIU_BINARY, ['dump', '--tree', pid, '--images-dir', images]),
        ),
      )
      const files = await readdir(images)
      const sizes = await Promise.all(
        files.map(async (file) => (await stat(path.join(images, file))).size),
      )
      imageBytes.push(sizes.reduce((sum, size) => sum + size, 0))
      const pidFile = path.join(dir, 'restored.pid')
      restore.push(
        await timeMs(() =>
          runHostCommand(DEFAULT_CRIU_BINARY, [
            ...['restore', '--images-dir', images, '--restore-detached'],
            ...['--pidfile', pidFile],
          ]),
        ),
      )
      restoredPid = Number(await readFile(pidFile, 'utf8'))
    } finally {
      await removeAll()
    }
  }
  return { dump, restore, imageBytes }
}
