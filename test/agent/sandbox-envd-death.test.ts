import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { baseTemplate, startTestAgent, type TestAgent } from './agent-fixture.js'

let test: TestAgent

beforeAll(async () => {
  test = await startTestAgent()
})

afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

it('fails a create at once when the sandbox stops before envd answers, leaving nothing', async () => {
  const sandboxID = `i${randomBytes(10).toString('hex')}`
  const started = Date.now()
  // 8 MiB: the kernel kills envd's node while it starts, and the sandbox's init ends with it.
  const create = test.agent.create({
    sandboxID,
    template: baseTemplate(),
    cpuCount: 1,
    memoryMB: 8,
    diskSizeMB: 512,
    envVars: {},
    egress: { allowOut: [], denyOut: [] },
  })
  await expect(create).rejects.toThrow('the sandbox stopped before envd answered')
  // The agent waits up to 15 s for envd; the container's end is seen within a second or two.
  expect(Date.now() - started).toBeLessThan(5_000)
  expect(await test.agent.get(sandboxID)).toBeUndefined()
})
