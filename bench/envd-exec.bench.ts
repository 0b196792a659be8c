import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { Sandbox } from 'e2b'
import { loopbackRoundTrips } from './floors/loopback-http.js'
import { ms, percentile, report, sampleMs } from './stats.js'

const COUNT = 300
const WARMUP = 30

/**
 * `commands.run('true')` through envd, against its floor: a bare HTTP round trip to a minimal
 * node server plus a direct `child_process` spawn of `true`. Target ≤ 1.5× the floor. The SDK
 * asks envd for `/bin/bash -l -c true` as the sandbox user, so a second line prints that same
 * command spawned directly (as uid 1000) beside it: the part of the figure that is the shell.
 */
export async function benchExec(sandbox: Sandbox): Promise<void> {
  const run = await sampleMs(COUNT, WARMUP, () => sandbox.commands.run('true'))
  const roundTrip = await loopbackRoundTrips(COUNT, WARMUP)
  const spawnTrue = await sampleMs(COUNT, WARMUP, () => spawnOnce('true', []))
  const spawnLoginShell = await sampleMs(COUNT, WARMUP, () =>
    spawnOnce('/bin/bash', ['-l', '-c', 'true'], { uid: 1000, gid: 1000 }),
  )
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
  const shellFloor = percentile(roundTrip, 50) + percentile(spawnLoginShell, 50)
  console.log(
    `info commands.run('true') p50 ${ms(percentile(run, 50))} vs http + direct spawn of the same \`bash -l -c true\` as uid 1000: ${ms(shellFloor)} (ratio ${(percentile(run, 50) / shellFloor).toFixed(2)})`,
  )
}

async function spawnOnce(
  file: string,
  args: string[],
  identity: { uid?: number; gid?: number } = {},
): Promise<void> {
  const child = spawn(file, args, { stdio: 'ignore', ...identity })
  await once(child, 'exit')
}
