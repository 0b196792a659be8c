import type { Logger } from '../../logger.js'
import { createCrunRuntime } from './crun-runtime.js'
import { createRuncRuntime } from './runc-runtime.js'
import { createRunscRuntime } from './runsc-runtime.js'
import type { Runtime, RuntimeName } from './runtime.js'

export interface CreateRuntimeOptions {
  name: RuntimeName
  /** Path of the runtime's binary; its name on PATH by default. */
  binary?: string
  /** The runtime's `--root`: this agent's container state, apart from any other user's. */
  stateRoot: string
  logger: Logger
  /** The agent's build directory, where its helper programs are. */
  helperDir: string
}

/** The configured OCI runtime (DESIGN.md: crun default, runc fallback, runsc hardened). */
export function createRuntime(options: CreateRuntimeOptions): Runtime {
  const cli = {
    binary: options.binary ?? options.name,
    stateRoot: options.stateRoot,
    logger: options.logger,
    helperDir: options.helperDir,
  }
  switch (options.name) {
    case 'crun':
      return createCrunRuntime(cli)
    case 'runc':
      return createRuncRuntime(cli)
    case 'runsc':
      return createRunscRuntime(cli)
  }
}
