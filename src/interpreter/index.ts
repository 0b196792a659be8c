import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { serve } from '@hono/node-server'
import { createLogger, type Logger } from '../logger.js'
import type { WorkerCommand } from './kernels/kernel.js'
import { INTERPRETER_PORT } from './port.js'
import { createInterpreterApp } from './server/app.js'
import { Contexts } from './server/contexts.js'
import { runBashWorker } from './workers/bash-worker.js'
import { runJavascriptWorker } from './workers/javascript-worker.js'
import { runRWorker } from './workers/r-worker.js'

export type { WorkerCommand } from './kernels/kernel.js'
export { normaliseLanguage } from './kernels/language.js'
export { INTERPRETER_PORT } from './port.js'

export const ENVD_URL = 'http://localhost:49983'

export interface InterpreterOptions {
  /** TCP port; 0 picks a free one. Default 49999. */
  port?: number
  host?: string
  envdUrl?: string
  /** How each language's worker is started; `undefined` for a language it cannot run. */
  workerCommand?: (language: string) => WorkerCommand | undefined
  /** Directory of the Python worker, `sandbar_kernel.py`. */
  pythonDir?: string
  keepaliveMs?: number
  /** Contexts made before listening; default python and javascript (wire contract §1.7). */
  defaultLanguages?: string[]
  /** Default `/home/user` (wire contract §1.7). */
  defaultCwd?: string
  logger?: Logger
}

export interface Interpreter {
  readonly port: number
  close(): Promise<void>
}

/**
 * The worker commands of the interpreter's own bundle: `<bundle> worker <language>` for
 * javascript, typescript, bash and r, and `python3 -u <pythonDir>/sandbar_kernel.py`.
 */
export function bundledWorkerCommand(
  entry: string,
  pythonDir: string,
): (language: string) => WorkerCommand | undefined {
  return (language) => {
    if (language === 'python') {
      return { command: 'python3', args: ['-u', path.join(pythonDir, 'sandbar_kernel.py')] }
    }
    if (['javascript', 'typescript', 'bash', 'r'].includes(language)) {
      const node = thisNode()
      return { command: node.command, args: [...node.args, entry, 'worker', language] }
    }
    return undefined
  }
}

/**
 * How to start the node running this process. In a sandbox it is the toolbox's, started through
 * its own loader: `execPath` is then the loader and `argv0` node (toolboxNodeArgv).
 */
function thisNode(): WorkerCommand {
  const { execPath, argv0 } = process
  if (!path.basename(execPath).startsWith('ld-linux')) return { command: execPath, args: [] }
  return { command: execPath, args: ['--library-path', path.dirname(execPath), argv0] }
}

/** Starts the default python and javascript contexts, then listens (health means ready). */
export async function startInterpreter(options: InterpreterOptions = {}): Promise<Interpreter> {
  const logger = options.logger ?? createLogger('interpreter')
  const entry = process.argv[1] ?? ''
  const workerCommand =
    options.workerCommand ??
    bundledWorkerCommand(entry, options.pythonDir ?? path.join(path.dirname(entry), 'python'))
  const contexts = new Contexts(workerCommand, logger, options.defaultCwd)
  const defaultLanguages = options.defaultLanguages ?? ['python', 'javascript']
  await Promise.all(defaultLanguages.map((language) => contexts.defaultFor(language)))
  const app = createInterpreterApp({
    contexts,
    envdUrl: options.envdUrl ?? ENVD_URL,
    keepaliveMs: options.keepaliveMs ?? 5000,
    logger,
  })
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>(
    (resolve) => {
      const server = serve(
        { fetch: app.fetch, port: options.port ?? INTERPRETER_PORT, hostname: options.host },
        (info: AddressInfo) => resolve({ server, port: info.port }),
      )
    },
  )
  logger.info({ port }, 'interpreter listening')
  return {
    port,
    async close() {
      if ('closeAllConnections' in server) server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await contexts.closeAll()
    },
  }
}

/** `interpreter [--port N] [--host H] [--envd-url U] [--python-dir D]` or `interpreter worker <language>`. */
export async function runInterpreterCommand(argv: string[]): Promise<void> {
  if (argv[0] === 'worker') {
    if (argv[1] === 'bash') return runBashWorker()
    if (argv[1] === 'r') return runRWorker()
    return runJavascriptWorker({ typescript: argv[1] === 'typescript' })
  }
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'envd-url': { type: 'string' },
      'python-dir': { type: 'string' },
    },
  })
  await startInterpreter({
    port: values.port === undefined ? undefined : Number(values.port),
    host: values.host,
    envdUrl: values['envd-url'],
    pythonDir: values['python-dir'],
  })
}
