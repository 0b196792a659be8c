import { randomBytes, randomInt } from 'node:crypto'
import type { Agent, SandboxTemplate } from '../agent/index.js'
import { EnvdProcessClient } from '../envd/index.js'
import type { StepSandbox } from './steps/build-context.js'

/** Build sandboxes' IDs: `b` + 20 of E2B's ID characters, never mistaken for a user's. */
function buildSandboxID(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz1234567890'
  let id = 'b'
  for (let i = 0; i < 20; i++) id += alphabet[randomInt(alphabet.length)]
  return id
}

/** A build sandbox's disk: its writes are one step's layer, sparse, so the size costs nothing. */
const BUILD_DISK_MB = 16_384

/** Where a build sandbox finds the operator's extra certificate authorities while a step runs. */
const CA_FILE = '/tmp/.sandbar-build-ca.pem'

/** The variables that point TLS clients at a CA bundle: OpenSSL's, Node's, Python's, git's. */
const CA_VARIABLES = [
  'SSL_CERT_FILE',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
]

export interface BuildSandboxOptions {
  layers: string[]
  env: Record<string, string>
  /**
   * A PEM bundle the steps' TLS clients trust (a TLS-intercepting proxy's authority among the
   * public ones): present only while the sandbox runs, never in a layer or the template's env.
   */
  caBundle?: Buffer | undefined
  cpuCount: number
  memoryMB: number
  /** A start command to run and wait for (the finalize phase's check); none for steps. */
  start?: Pick<SandboxTemplate, 'startCmd' | 'readyCmd' | 'defaultUser' | 'defaultWorkdir'>
}

/**
 * A real sandbox created through the agent for one build phase (issue 11: same runtime, same
 * limits), with an access token of its own; steps run in it through envd. It ends either kept
 * as a layer (`commit`) or removed (`remove`).
 */
export class BuildSandbox implements StepSandbox {
  private readonly client: EnvdProcessClient

  private constructor(
    private readonly agent: Agent,
    readonly sandboxID: string,
    private readonly url: string,
    private readonly accessToken: string,
    private readonly signal: AbortSignal,
  ) {
    this.client = new EnvdProcessClient({ url, accessToken })
  }

  /** Aborting `signal` (a cancelled build) kills what runs in it. */
  static async create(
    agent: Agent,
    options: BuildSandboxOptions,
    signal: AbortSignal,
  ): Promise<BuildSandbox> {
    const sandboxID = buildSandboxID()
    const accessToken = randomBytes(32).toString('hex')
    const info = await agent.create({
      sandboxID,
      template: {
        templateID: 'build',
        layers: options.layers,
        defaultUser: options.start?.defaultUser ?? 'root',
        // None: a step without a WORKDIR runs in its user's home (§2.2), as envd does then.
        defaultWorkdir: options.start?.defaultWorkdir ?? '',
        startCmd: options.start?.startCmd,
        readyCmd: options.start?.readyCmd,
      },
      build: true,
      cpuCount: options.cpuCount,
      memoryMB: options.memoryMB,
      diskSizeMB: BUILD_DISK_MB,
      envVars: {
        ...options.env,
        ...(options.caBundle === undefined
          ? {}
          : Object.fromEntries(CA_VARIABLES.map((name) => [name, CA_FILE]))),
      },
      accessToken,
      egress: { allowOut: [], denyOut: [] },
    })
    const sandbox = new BuildSandbox(agent, sandboxID, info.envdURL, accessToken, signal)
    if (options.caBundle !== undefined) {
      await sandbox.use(() => sandbox.upload(CA_FILE, options.caBundle ?? Buffer.alloc(0)))
      sandbox.caFile = true
    }
    return sandbox
  }

  async run(argv: string[], options: Parameters<StepSandbox['run']>[1]): Promise<number> {
    const [cmd = '', ...args] = argv
    const result = await this.client.run(
      { cmd, args, user: options.user, cwd: options.cwd, envs: options.envs },
      { onLine: options.onOutput, signal: this.signal },
    )
    return result.exitCode
  }

  async upload(path: string, data: Buffer): Promise<void> {
    const form = new FormData()
    form.append('file', new Blob([data]), 'file')
    const query = new URLSearchParams({ path, username: 'root' })
    const response = await fetch(`${this.url}/files?${query}`, {
      method: 'POST',
      headers: { 'x-access-token': this.accessToken },
      body: form,
    })
    if (!response.ok) {
      throw new Error(`upload of ${path} failed: ${response.status} ${await response.text()}`)
    }
  }

  /** Runs `work` with the sandbox, removing the sandbox when it throws. */
  async use<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      // Already gone when the failure came after (or inside) its commit.
      await this.remove().catch(() => undefined)
      throw error
    }
  }

  /** Whether the operator's CA bundle is in the sandbox, to take out before a commit. */
  private caFile = false

  /** Keeps what the sandbox wrote as layer `layerID` and removes the sandbox. */
  async commit(layerID: string): Promise<void> {
    if (this.caFile) {
      await this.client.run({ cmd: '/bin/rm', args: ['-f', CA_FILE], user: 'root' })
    }
    return this.agent.commit(this.sandboxID, layerID)
  }

  remove(): Promise<void> {
    return this.agent.kill(this.sandboxID)
  }
}
