// Run by listening-sockets.test.ts in a network namespace of its own (`unshare --net`), where
// nothing else comes or goes: prints how many times the watch had called after each step.
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

const INTERVAL_MS = 20
const addon = createRequire(import.meta.url)(process.argv[2])
execFileSync('ip', ['link', 'set', 'lo', 'up'])
// The watch keeps nothing alive; this does, until the steps are done.
const alive = setInterval(() => {}, 1_000)

let calls = 0
const stop = addon.watchListeningTcpSockets(INTERVAL_MS, () => calls++)
/** Waits for the next call (up to 5 s), then for ten more intervals; the count then. */
async function settle(expectCall) {
  const deadline = Date.now() + 5_000
  const before = calls
  while (expectCall && calls === before && Date.now() < deadline) await sleep(5)
  await sleep(10 * INTERVAL_MS)
  return calls
}

const counts = { started: await settle(true) }
const server = net.createServer().listen(0, '127.0.0.1')
await once(server, 'listening')
counts.listening = await settle(true)
counts.quiet = await settle(false)
execFileSync('ip', ['address', 'add', '10.249.0.1/32', 'dev', 'lo'])
counts.addressAdded = await settle(true)
server.close()
counts.closed = await settle(true)
stop()
stop()
const after = net.createServer().listen(0, '127.0.0.1')
await once(after, 'listening')
counts.afterStop = await settle(false)
after.close()
clearInterval(alive)
console.log(JSON.stringify(counts))
