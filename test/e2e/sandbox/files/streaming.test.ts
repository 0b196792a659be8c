import { createHash, randomBytes } from 'node:crypto'
import type { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  ENVD_TEST_PORTS,
  initEnvd,
  type NamespacedEnvd,
  startNamespacedEnvd,
} from '../../envd-namespace.js'
import { sandboxForEnvd } from '../../setup.js'

const MiB = 1024 * 1024
const SIZE = 1024 * MiB

/**
 * A fresh envd of its own, so the peak memory it reports is this test's. In its PID namespace
 * tini is PID 1 and envd its only child.
 */
let envd: NamespacedEnvd
let sandbox: Sandbox
beforeAll(async () => {
  envd = await startNamespacedEnvd(ENVD_TEST_PORTS.streaming, inject('envdBundle'))
  await initEnvd(envd.url)
  sandbox = sandboxForEnvd(envd.url)
})
afterAll(() => envd?.stop())

/**
 * `size` bytes generated as they are pulled, hashed on the way out. Each MiB repeats a fresh
 * random 16 KiB block: unpredictable across the file, yet cheap to make.
 */
function generated(size: number, hash: ReturnType<typeof createHash>): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) {
        controller.close()
        return
      }
      const chunk = Buffer.alloc(Math.min(MiB, size - sent), randomBytes(16 * 1024))
      hash.update(chunk)
      sent += chunk.length
      controller.enqueue(new Uint8Array(chunk))
    },
  })
}

async function peakRssBytes(): Promise<number> {
  const envdPid = (await sandbox.commands.run('cat /proc/1/task/1/children')).stdout.trim()
  const cmdline = await sandbox.commands.run(`tr "\\0" " " < /proc/${envdPid}/cmdline`)
  expect(cmdline.stdout).toContain('envd.cjs')
  const status = await sandbox.commands.run(`cat /proc/${envdPid}/status`)
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status.stdout)
  if (!match?.[1]) throw new Error(`no VmHWM in /proc/${envdPid}/status:\n${status.stdout}`)
  return Number(match[1]) * 1024
}

describe('streaming through envd', () => {
  it('uploads and downloads 1 GiB without holding it in memory', { timeout: 300_000 }, async () => {
    const file = '/home/user/sbt-1gib.bin'
    const sent = createHash('sha256')
    await sandbox.files.write(file, generated(SIZE, sent))
    const sentDigest = sent.digest('hex')

    const received = createHash('sha256')
    let receivedBytes = 0
    const stream = await sandbox.files.read(file, { format: 'stream', requestTimeoutMs: 0 })
    for await (const chunk of stream) {
      received.update(chunk)
      receivedBytes += chunk.length
    }
    expect(receivedBytes).toBe(SIZE)
    expect(received.digest('hex')).toBe(sentDigest)

    const remote = await sandbox.commands.run(`sha256sum ${file}`, { timeoutMs: 120_000 })
    expect(remote.stdout.split(' ')[0]).toBe(sentDigest)
    const peak = await peakRssBytes()
    console.log(`envd peak RSS after 1 GiB up and down: ${(peak / MiB).toFixed(0)} MiB`)
    expect(peak).toBeLessThan(256 * MiB)
    await sandbox.files.remove(file)
  })
})
