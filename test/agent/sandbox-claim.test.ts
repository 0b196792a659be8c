import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hostNames } from '../../src/agent/host-names.js'
import { type SandboxInfo, SandboxStateError } from '../../src/agent/index.js'
import { cpuWeightFile } from '../../src/agent/limits/parent-cgroup.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { readRecord, sandboxRequest, startTestAgent, type TestAgent } from './agent-fixture.js'

// A warm pool's sandbox is started with the template's settings alone; `claim` hands it to a
// client with the client's env vars, access token and egress rules (api warm-pools.ts).

let test: TestAgent
let pooled: SandboxInfo

beforeAll(async () => {
  test = await startTestAgent()
  pooled = await test.agent.create(
    sandboxRequest({ envVars: { FROM_TEMPLATE: 'yes' }, warm: true }),
  )
})

afterAll(async () => {
  expect(await test?.dispose()).toEqual([])
})

/** The CPU weight the sandbox's cgroup has now (cpu.shares on v1, cpu.weight on v2). */
async function cpuWeight(sandboxID: string): Promise<number> {
  const file = await cpuWeightFile(hostNames(test.config.prefix, sandboxID).cgroupPath)
  return Number(await readFile(file, 'utf8'))
}

describe('claiming a started sandbox', () => {
  it('keeps a waiting sandbox at the lowest CPU weight, and gives the claimed one its size’s', async () => {
    const cold = await test.agent.create(sandboxRequest())
    try {
      const full = await cpuWeight(cold.sandboxID)
      const waiting = await cpuWeight(pooled.sandboxID)
      expect(waiting).toBeLessThanOrEqual(2)
      expect(full).toBeGreaterThan(waiting)
      await test.agent.claim(pooled.sandboxID, {
        envVars: { FROM_TEMPLATE: 'yes' },
        egress: { allowOut: [], denyOut: [] },
      })
      expect(await cpuWeight(pooled.sandboxID)).toBe(full)
    } finally {
      await test.agent.kill(cold.sandboxID)
    }
  })

  it('gives envd the client’s env vars and token, and keeps its egress rules', async () => {
    expect((await fetch(`${pooled.envdURL}/envs`)).status).toBe(200)
    const egress = { allowOut: ['10.232.0.1'], denyOut: ['0.0.0.0/0'] }
    await test.agent.claim(pooled.sandboxID, {
      envVars: { FROM_TEMPLATE: 'yes', CLIENT: 'mine' },
      accessToken: 'client-token',
      egress,
    })
    expect((await fetch(`${pooled.envdURL}/envs`)).status).toBe(401)
    // The claim checks only what its /init changed: the lock from the start still holds, so
    // anyone else's /init, with a token of their own, is refused and changes nothing.
    const rogue = await fetch(`${pooled.envdURL}/init`, {
      method: 'POST',
      body: JSON.stringify({ accessToken: 'rogue-token', envVars: { CLIENT: 'rogue' } }),
    })
    expect(rogue.status).toBe(401)
    const sandbox = sandboxForEnvd(pooled.envdURL, 'client-token', pooled.sandboxID)
    const result = await sandbox.commands.run('echo "$FROM_TEMPLATE $CLIENT"')
    expect(result.stdout).toBe('yes mine\n')
    expect(await readRecord(test.config.dataDir, pooled.sandboxID)).toMatchObject({
      accessToken: 'client-token',
      envVars: { CLIENT: 'mine' },
      egress,
    })
  })

  it('refuses a paused sandbox', async () => {
    await test.agent.pause(pooled.sandboxID)
    try {
      await expect(
        test.agent.claim(pooled.sandboxID, { envVars: {}, egress: { allowOut: [], denyOut: [] } }),
      ).rejects.toBeInstanceOf(SandboxStateError)
    } finally {
      await test.agent.resume(pooled.sandboxID)
    }
  })
})
