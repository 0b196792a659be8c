import { spawn } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Sandbox } from 'e2b'
import { ms, percentile, report, sampleMs } from './stats.js'

const COUNT = 300
const WARMUP = 30

/**
 * `commands.run('true')` through envd, against its floor: a bare HTTP round trip to a minimal
 * node server plus a direct `child_process` spawn of `true`. Target ≤ 1.5× the floor.
 */
export async function benchExec(sandbox: Sandbox): Promise<void> {
  const run = await sampleMs(COUNT, WARMUP, () => sandbox.commands.run('true'))
  const roundTrip = await bareHttpRoundTrips()
  const spawnTrue = await sampleMs(COUNT, WARMUP, spawnTrueOnce)
  for (const p of [50, 99]) {
    const figure = percentile(run, p)
    const floor = percentile(roundTrip, p) + percentile(spawnTrue, p)
    report({
      name: `commands.run('true') p${p}`,
      figure: ms(figure),
      floor: `${ms(floor)} (http ${ms(percentile(roundTrip, p))} + spawn ${ms(percentile(spawnTrue, p))})`,
      ratio: figure / floor,
      target: '≤ 1.5',
      ok: figure / floor <= 1.5,
    })
  }
}

async function bareHttpRoundTrips(): Promise<number[]> {
  const server = http.createServer((_req, res) => res.end())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  try {
    return await sampleMs(COUNT, WARMUP, async () => {
      const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })
      await response.arrayBuffer()
    })
  } finally {
    server.close()
  }
}

async function spawnTrueOnce(): Promise<void> {
  const child = spawn('true', { stdio: 'ignore' })
  await once(child, 'exit')
}
