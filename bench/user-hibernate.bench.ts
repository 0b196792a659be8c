import { Sandbox } from 'e2b'
import { heapHolderScript } from './floors/criu.js'
import { timeMs } from './stats.js'
import type { UserServe } from './user-serve.js'

/** Starts heapHolderScript's Python process in the sandbox and waits until its heap is full. */
export async function holdHeap(sandbox: Sandbox, heapMiB: number): Promise<void> {
  await sandbox.files.write('/tmp/heap.py', heapHolderScript(heapMiB))
  await sandbox.commands.run('python3 /tmp/heap.py /tmp/ready', { background: true, timeoutMs: 0 })
  while ((await sandbox.commands.run('cat /tmp/ready || true')).stdout !== 'ready') {
    await sandbox.commands.run('sleep 0.05')
  }
}

/**
 * Hibernation as an SDK user meets it, against a service started with `--hibernate-after 0`:
 * a sandbox whose Python process holds `heapMiB` of random bytes is paused, the service moves
 * it to disk (its log gives how long that took and the image's size), and `Sandbox.connect`
 * brings it back, timed to the end of the first command after it.
 */
export async function sampleHibernation(serve: UserServe, count: number, heapMiB: number) {
  const hibernate: number[] = []
  const resume: number[] = []
  const imageBytes: number[] = []
  for (let i = 0; i < count; i++) {
    const sandbox = await serve.create()
    try {
      await holdHeap(sandbox, heapMiB)
      await sandbox.pause()
      const logged = await serve.hibernated(sandbox.sandboxId)
      hibernate.push(logged.durationMs)
      imageBytes.push(logged.imageBytes)
      resume.push(
        await timeMs(async () => {
          const resumed = await Sandbox.connect(sandbox.sandboxId, serve.client)
          await resumed.commands.run('true')
        }),
      )
    } finally {
      await sandbox.kill()
    }
  }
  return { hibernate, resume, imageBytes }
}
