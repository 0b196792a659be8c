import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { createLogger, type Logger } from '../logger.js'
import { type EnvdHandover, readHandover } from './handover.js'
import { collectAllGarbage, collectWhenIdle } from './idle-memory.js'
import { outputFileLog } from './output-file-log.js'
import { type PortForwarder, startPortForwarder } from './port-forward/port-forwarder.js'
import { runAsPath } from './process/run-as-path.js'
import { createEnvdServer } from './server.js'
import { EnvdState } from './state.js'
import { UserDirectory } from './users.js'
import { ENVD_PORT, ENVD_VERSION } from './version.js'

/** How to run one envd. */
export interface EnvdOptions {
  /** TCP port; 0 picks a free one. Default 49983. */
  port?: number
  /** Listen address. Default `0.0.0.0`, as inside a sandbox. */
  host?: string
  logger?: Logger
  /** The agent's handover (a sandbox's envd): locked from the start, `/init` the agent's. */
  handover?: EnvdHandover
}

/** A running envd. */
export interface Envd {
  readonly port: number
  close(): Promise<void>
}

/**
 * Starts envd: the in-sandbox agent serving `filesystem.Filesystem`, `process.Process` and the
 * HTTP routes of wire contract §3. `E2B_SANDBOX_ID` and `E2B_TEMPLATE_ID` in envd's own
 * environment are passed on to user processes with `E2B_SANDBOX=true`. Two more variables of
 * envd's environment, set by the agent in sandboxes only: `SANDBAR_TOOLBOX=<dir>` starts
 * envd's run-as helper from the toolbox mounted there, and `SANDBAR_PORT_FORWARD=1` forwards
 * services listening on localhost to the external interface (wire contract §3.1), which on a
 * host would expose them.
 */
export async function startEnvd(options: EnvdOptions = {}): Promise<Envd> {
  const logger = options.logger ?? createLogger('envd', { destination: outputFileLog(2) })
  const state = new EnvdState(sandboxEnv(process.env), options.handover)
  const runAs = runAsPath(process.env.SANDBAR_TOOLBOX)
  const server = createEnvdServer({ state, users: new UserDirectory(), logger, runAs })
  server.listen(options.port ?? ENVD_PORT, options.host ?? '0.0.0.0')
  await once(server, 'listening')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('envd is not on TCP')
  const { port } = address
  const locked = options.handover !== undefined
  logger.info({ port, version: ENVD_VERSION, runAs, locked }, 'envd listening')
  const forwarder = startForwarder(logger, port)
  const stopCollecting = collectWhenIdle(server, () => collectAllGarbage(logger))
  return {
    port,
    close: async () => {
      stopCollecting()
      await forwarder?.stop()
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

/** The localhost port forwarder, when `SANDBAR_PORT_FORWARD=1`; never for envd's own port. */
function startForwarder(logger: Logger, port: number): PortForwarder | undefined {
  if (process.env.SANDBAR_PORT_FORWARD !== '1') return undefined
  return startPortForwarder({
    logger: logger.child({ component: 'port-forward' }),
    reservedPorts: [ENVD_PORT, port],
  })
}

function sandboxEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = { E2B_SANDBOX: 'true' }
  for (const key of ['E2B_SANDBOX_ID', 'E2B_TEMPLATE_ID'] as const) {
    const value = env[key]
    if (value) result[key] = value
  }
  return result
}

/**
 * `sandbar envd [--port N] [--host ADDR] [--handover-fd FD]`: starts envd and stops it on
 * SIGTERM or SIGINT. `--handover-fd` names the descriptor of the agent's handover (a sandbox's
 * envd); without it envd runs open, as the E2B SDK's debug mode expects of a local envd.
 */
export async function runEnvdCommand(argv: string[]): Promise<Envd> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'handover-fd': { type: 'string' },
    },
  })
  const handoverFD = values['handover-fd']
  const envd = await startEnvd({
    port: values.port === undefined ? ENVD_PORT : Number(values.port),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(handoverFD === undefined ? {} : { handover: readHandover(Number(handoverFD)) }),
  })
  const stop = (): void => void envd.close().then(() => process.exit(0))
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  return envd
}
