import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresCluster } from '../store/postgres-cluster.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

const cluster = new PostgresCluster()
let serve: ServeInstance | undefined

describe.skipIf(!PostgresCluster.available())('sandbar serve on PostgreSQL', () => {
  beforeAll(async () => {
    await cluster.start()
    serve = await startServe([
      '--postgres-url',
      await cluster.newDatabase(),
      '--max-lifetime-hours',
      '2',
    ])
  })

  afterAll(async () => {
    const leaks = await serve?.stop()
    await cluster.stop()
    expect(leaks).toEqual([])
  })

  it('keeps its state in the database and survives a crash', async () => {
    const client = serve?.client ?? { apiUrl: '', sandboxUrl: '', apiKey: '' }
    const sandbox = await Sandbox.create({ ...client, metadata: { store: 'postgres' } })
    await sandbox.setTimeout(90 * 60 * 1000)
    await serve?.crashAndRestart()
    const [listed] = await Sandbox.list({
      ...client,
      query: { metadata: { store: 'postgres' } },
    }).nextItems()
    expect(listed?.sandboxId).toBe(sandbox.sandboxId)
    const again = await Sandbox.connect(sandbox.sandboxId, { ...client, timeoutMs: 60_000 })
    expect((await again.commands.run('echo on postgres')).stdout).toBe('on postgres\n')
    await again.kill()
  })
})
