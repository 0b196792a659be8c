import path from 'node:path'
import type { Logger } from '../../logger.js'
import { pathExists } from '../path-exists.js'
import { createRuntime } from './create-runtime.js'
import { RUNTIME_NAMES, type Runtime, type RuntimeName } from './runtime.js'

export interface RuntimeSetOptions {
  /** Each runtime keeps its container state in `<dataDir>/runtime/<name>`. */
  dataDir: string
  /** The runtime new sandboxes get. */
  defaultName: RuntimeName
  /** The default runtime's binary, when not on PATH under its own name. */
  defaultBinary?: string | undefined
  logger: Logger
  /** The agent's build directory, where its helper programs are. */
  helperDir: string
}

/**
 * The OCI runtimes of one agent. New sandboxes run on the configured one; every other
 * operation uses the runtime the sandbox recorded, so changing the configuration leaves
 * sandboxes started under the old one working, and reconcile sees them all.
 */
export class RuntimeSet {
  private readonly made = new Map<RuntimeName, Runtime>()

  constructor(private readonly options: RuntimeSetOptions) {}

  get(name: RuntimeName): Runtime {
    let runtime = this.made.get(name)
    if (runtime === undefined) {
      runtime = createRuntime({
        name,
        binary: name === this.options.defaultName ? this.options.defaultBinary : undefined,
        stateRoot: this.stateRoot(name),
        logger: this.options.logger,
        helperDir: this.options.helperDir,
      })
      this.made.set(name, runtime)
    }
    return runtime
  }

  /** The default runtime and every other one that has kept state on this host. */
  async withState(): Promise<Runtime[]> {
    const present = await Promise.all(
      RUNTIME_NAMES.map(async (name) =>
        name === this.options.defaultName || (await pathExists(this.stateRoot(name))) ? [name] : [],
      ),
    )
    return present.flat().map((name) => this.get(name))
  }

  private stateRoot(name: RuntimeName): string {
    return path.join(this.options.dataDir, 'runtime', name)
  }
}
