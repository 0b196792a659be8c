import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { runHostCommand } from '../../src/agent/host-command.js'
import { TEST_ADDRESS_POOL } from './agent-fixture.js'

/**
 * A host of the test's own in a network namespace it creates, joined to the host by a veth:
 * the only kind of "outside" address sandboxes may send test traffic to. It serves HTTP on
 * port 8080 with the body `external`.
 */
export interface TestNetworkHost {
  address: string
  stop(): Promise<void>
}

export async function startTestNetworkHost(
  prefix: string,
  subnet: number,
): Promise<TestNetworkHost> {
  // No dash after the prefix: `<prefix>-<id>` names are sandbox namespaces to reconcile.
  const netns = `${prefix}ext`
  const hostEnd = `${prefix}x0`
  const address = `10.232.${subnet}.2`
  let server: ChildProcess | undefined
  const stop = async (): Promise<void> => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = once(server, 'exit')
      server.kill('SIGKILL')
      await exited
    }
    await runHostCommand('ip', ['netns', 'delete', netns]).catch(() => undefined)
  }
  try {
    await runHostCommand('ip', ['netns', 'add', netns])
    await runHostCommand('ip', [
      'link',
      'add',
      hostEnd,
      'type',
      'veth',
      'peer',
      'name',
      'eth0',
      'netns',
      netns,
    ])
    await runHostCommand('ip', ['addr', 'add', `10.232.${subnet}.1/30`, 'dev', hostEnd])
    await runHostCommand('ip', ['link', 'set', hostEnd, 'up'])
    // Replies to sandboxes are forwarded from this interface to theirs.
    await writeFile(`/proc/sys/net/ipv4/conf/${hostEnd}/forwarding`, '1')
    const inNetns = (...args: string[]) => runHostCommand('ip', ['-n', netns, ...args])
    await inNetns('addr', 'add', `${address}/30`, 'dev', 'eth0')
    await inNetns('link', 'set', 'eth0', 'up')
    await inNetns('link', 'set', 'lo', 'up')
    await inNetns('route', 'add', TEST_ADDRESS_POOL, 'via', `10.232.${subnet}.1`)
    const script = `require('http').createServer((q, s) => s.end('external')).listen(8080, '${address}', () => console.log('ready'))`
    server = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await once(server.stdout ?? server, 'data')
    return { address, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
