import { Sandbox } from 'e2b'
import { timeMs } from './stats.js'
import { holdHeap } from './user-hibernate.bench.js'
import type { UserServe } from './user-serve.js'

/**
 * Snapshots as an SDK user meets them: a sandbox whose Python process holds `heapMiB` of
 * random bytes is snapshotted (the service logs how long it stood frozen, and the images'
 * size), and a sandbox created from the snapshot is timed to the end of its first command.
 */
export async function sampleSnapshots(serve: UserServe, count: number, heapMiB: number) {
  const snapshot: number[] = []
  const frozen: number[] = []
  const imageBytes: number[] = []
  const createToFirst: number[] = []
  for (let i = 0; i < count; i++) {
    const source = await serve.create()
    try {
      await holdHeap(source, heapMiB)
      let snapshotID = ''
      snapshot.push(
        await timeMs(async () => {
          snapshotID = (await source.createSnapshot()).snapshotId
        }),
      )
      const logged = await serve.snapshotted(source.sandboxId)
      frozen.push(logged.frozenMs)
      imageBytes.push(logged.imageBytes)
      let created: Sandbox | undefined
      createToFirst.push(
        await timeMs(async () => {
          created = await Sandbox.create(snapshotID, serve.client)
          await created.commands.run('true')
        }),
      )
      await created?.kill()
      await Sandbox.deleteSnapshot(snapshotID, serve.client)
    } finally {
      await source.kill()
    }
  }
  return { snapshot, frozen, imageBytes, createToFirst }
}

/**
 * `sandbox.fork({ count })` of a sandbox holding `heapMiB`, timed to the end of the first
 * command in every fork: the whole fork, and what each fork's share of it was.
 */
export async function sampleFork(serve: UserServe, count: number, heapMiB: number) {
  const source = await serve.create()
  try {
    await holdHeap(source, heapMiB)
    let forks: Sandbox[] = []
    const totalMs = await timeMs(async () => {
      const results = await source.fork({ count })
      forks = results.filter((fork): fork is Sandbox => fork instanceof Sandbox)
      await Promise.all(forks.map((fork) => fork.commands.run('true')))
    })
    await Promise.all(forks.map((fork) => fork.kill()))
    return { totalMs, started: forks.length, perForkMs: totalMs / count }
  } finally {
    await source.kill()
  }
}
