import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { SandboxNotFoundError } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxProxy } from '../../src/proxy/index.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { MapDirectory, startProxy } from './proxy-fixture.js'

// A real envd from the built bundle on its own loopback address and the SDK's envd port, which
// the SDK names in every `E2b-Sandbox-Port` header it sends through `sandboxUrl`.
const ENVD_ADDRESS = '127.0.0.4'
const ENVD_PORT = 49983
const SANDBOX_ID = 'isdkproxy0000000000001'

const directory = new MapDirectory()
let buildDir: string | undefined
let envd: ChildProcess | undefined
let proxy: SandboxProxy | undefined
let proxyURL = ''

async function waitForHealth(child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `envd exited (${child.exitCode ?? child.signalCode}) before answering /health`,
      )
    }
    const answer = await fetch(`http://${ENVD_ADDRESS}:${ENVD_PORT}/health`).catch(() => null)
    if (answer?.status === 204) return
    await sleep(100)
  }
  throw new Error('envd did not answer /health')
}

beforeAll(async () => {
  buildDir = await mkdtemp('/tmp/sbt-proxy-')
  await promisify(execFile)(process.execPath, ['scripts/build.mjs', buildDir])
  const child = spawn(
    process.execPath,
    [path.join(buildDir, 'envd/envd.cjs'), '--port', String(ENVD_PORT), '--host', ENVD_ADDRESS],
    { stdio: 'ignore' },
  )
  envd = child
  await waitForHealth(child)
  directory.sandboxes.set(SANDBOX_ID, {
    sandboxID: SANDBOX_ID,
    address: ENVD_ADDRESS,
    state: 'running',
    autoResume: false,
  })
  const started = await startProxy(directory)
  proxy = started.proxy
  proxyURL = `http://127.0.0.1:${started.port}`
})

afterAll(async () => {
  await proxy?.close()
  if (envd !== undefined && envd.exitCode === null && envd.signalCode === null) {
    const exited = once(envd, 'exit')
    envd.kill('SIGTERM')
    await exited
  }
  if (buildDir !== undefined) await rm(buildDir, { recursive: true, force: true })
})

describe('the e2b SDK through the proxy', () => {
  it('runs a command', async () => {
    const sandbox = sandboxForEnvd(proxyURL, undefined, SANDBOX_ID)
    const result = await sandbox.commands.run('echo hi')
    expect(result.stdout).toBe('hi\n')
    expect(result.exitCode).toBe(0)
  })

  it('writes and reads a file', async () => {
    const sandbox = sandboxForEnvd(proxyURL, undefined, SANDBOX_ID)
    const file = path.join(buildDir ?? '/nonexistent', 'through-proxy.txt')
    const content = 'x'.repeat(1 << 20)
    await sandbox.files.write(file, content)
    expect(await sandbox.files.read(file)).toBe(content)
  })

  // Connect maps the proxy's 502 to `unavailable`, which the SDK reports as a sandbox that is
  // "probably not running anymore".
  it('reports an unknown sandbox as not found', async () => {
    const sandbox = sandboxForEnvd(proxyURL, undefined, 'iunknown0000000000000')
    await expect(sandbox.commands.run('true')).rejects.toBeInstanceOf(SandboxNotFoundError)
  })
})
