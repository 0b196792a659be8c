import { execFileSync } from 'node:child_process'
import { describe, inject, it } from 'vitest'
import { createRuntime } from '../../src/agent/runtime/create-runtime.js'
import type { RuntimeName } from '../../src/agent/runtime/runtime.js'
import { createLogger } from '../../src/logger.js'
import { runRuntimeCases } from '../cases/runtime.cases.js'

/** Whether `binary` is on PATH (runsc is not installed on every machine). */
function installed(binary: string): boolean {
  try {
    execFileSync('which', [binary], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const logger = createLogger('runtime-test')
const helperDir = inject('envdBuildDir')

for (const name of ['crun', 'runc', 'runsc'] satisfies RuntimeName[]) {
  if (installed(name)) {
    runRuntimeCases({
      name,
      newRuntime: (stateRoot) => createRuntime({ name, stateRoot, logger, helperDir }),
    })
  } else {
    describe(`${name} runtime`, () => {
      it.skip(`skipped: the ${name} binary is not installed on this machine`, () => undefined)
    })
  }
}
