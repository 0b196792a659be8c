import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAddressPool } from '../../src/agent/network/address-pool.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import {
  sandboxRequest,
  startTestAgent,
  TEST_ADDRESS_POOL,
  type TestAgent,
} from './agent-fixture.js'

const sandboxID = () => `i${randomBytes(10).toString('hex')}`
const TOKEN = `sbt-token-${randomBytes(16).toString('hex')}`

/** The addresses a fresh agent hands out first: slots are the lowest free ones, in order. */
const predictable = [0, 1, 2, 3].map(
  (slot) => createAddressPool(TEST_ADDRESS_POOL).addresses(slot).sandboxAddress,
)

/**
 * An attacker who reaches sandbox addresses pushes `/init` at every predictable address in a
 * tight loop while the agent creates a sandbox: a far-future timestamp (so the agent's real
 * push looks stale), its own env var and, when `token` is given, its own access token.
 * Answers with the statuses envd gave it.
 */
function rogueInit(token: string | undefined): { stop(): Promise<number[]> } {
  const statuses: number[] = []
  let running = true
  const body = JSON.stringify({
    timestamp: '2100-01-01T00:00:00Z',
    envVars: { SBT_ROGUE: 'set' },
    ...(token === undefined ? {} : { accessToken: token }),
  })
  // One loop per address, so an address that does not answer yet never slows the others.
  const loops = predictable.map(async (address) => {
    while (running) {
      await fetch(`http://${address}:49983/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(100),
      }).then(
        (response) => statuses.push(response.status),
        () => new Promise((resolve) => setTimeout(resolve, 1)),
      )
    }
  })
  return {
    stop: async () => {
      running = false
      await Promise.all(loops)
      return statuses
    },
  }
}

/** The rogue reached envd (so the race was run) and envd refused it every time. */
function reachedButRefused(statuses: number[]): boolean {
  return statuses.includes(401) && statuses.every((status) => status === 401)
}

let test: TestAgent
beforeAll(async () => {
  test = await startTestAgent()
})
afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

function request(id: string, accessToken?: string) {
  return sandboxRequest({
    sandboxID: id,
    envVars: { SBT_FROM_AGENT: 'yes' },
    ...(accessToken === undefined ? {} : { accessToken }),
  })
}

describe("envd is locked from its first answer; /init is the agent's alone", () => {
  it('a rogue /init with a future timestamp and no token leaves the real token in force', async () => {
    const rogue = rogueInit(undefined)
    const info = await test.agent.create(request(sandboxID(), TOKEN)).finally(() => rogue.stop())
    expect(await rogue.stop()).toSatisfy(reachedButRefused)
    const open = await fetch(`${info.envdURL}/envs`)
    expect(open.status).toBe(401)
    const sandbox = sandboxForEnvd(info.envdURL, TOKEN)
    const result = await sandbox.commands.run('echo "$SBT_FROM_AGENT:$SBT_ROGUE"')
    expect(result.stdout).toBe('yes:\n')
    await test.agent.kill(info.sandboxID)
  })

  it('a rogue /init with a token of its own neither takes over nor breaks the create', async () => {
    const rogue = rogueInit('sbt-rogue-token')
    const info = await test.agent.create(request(sandboxID(), TOKEN)).finally(() => rogue.stop())
    expect(await rogue.stop()).toSatisfy(reachedButRefused)
    const withRogueToken = await fetch(`${info.envdURL}/envs`, {
      headers: { 'X-Access-Token': 'sbt-rogue-token' },
    })
    expect(withRogueToken.status).toBe(401)
    const withToken = await fetch(`${info.envdURL}/envs`, { headers: { 'X-Access-Token': TOKEN } })
    expect(await withToken.json()).toMatchObject({ SBT_FROM_AGENT: 'yes' })
    await test.agent.kill(info.sandboxID)
  })

  it('sandbox code cannot push /init, nor find the control secret, even as root', async () => {
    const rogue = rogueInit(undefined)
    const info = await test.agent.create(request(sandboxID())).finally(() => rogue.stop())
    expect(await rogue.stop()).toSatisfy(reachedButRefused)
    const sandbox = sandboxForEnvd(info.envdURL)
    const push = await sandbox.commands.run(
      `node -e 'fetch("http://127.0.0.1:49983/init",{method:"POST",body:JSON.stringify({envVars:{SBT_INSIDE:"1"}})}).then(r=>console.log(r.status))'`,
      { user: 'root' },
    )
    expect(push.stdout).toBe('401\n')
    const env = await sandbox.commands.run('echo "[$SBT_INSIDE]"')
    expect(env.stdout).toBe('[]\n')
    // Whatever PID 1 and envd were started with (environment, arguments, open files) is
    // readable by the sandbox's root; the secret must be in none of it.
    const dump = await sandbox.commands.run(
      'for p in /proc/[0-9]*; do cat $p/environ $p/cmdline; for f in $p/fd/*; do [ -f "$f" ] && cat "$f"; done; done 2>/dev/null </dev/null | base64 -w0',
      { user: 'root', timeoutMs: 20_000 },
    )
    const record = JSON.parse(
      await readFile(
        path.join(test.config.dataDir, 'sandboxes', info.sandboxID, 'sandbox.json'),
        'utf8',
      ),
    ) as { envdControlSecret?: string }
    expect(record.envdControlSecret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const seen = Buffer.from(dump.stdout, 'base64').toString('latin1')
    expect(seen.length).toBeGreaterThan(0)
    expect(seen).not.toContain(record.envdControlSecret)
    await test.agent.kill(info.sandboxID)
  })
})
