import { type EnvdCommand, EnvdProcessClient, type EnvdTarget } from '../envd/index.js'
import type { Logger } from '../logger.js'
import type { BootSettings } from './index.js'

/** How long create waits for a template's ready command before giving up on the sandbox. */
const READY_TIMEOUT_MS = 60_000
/** Between ready checks at create: a user waits on each one, so far shorter than §2.5's 2 s. */
const READY_INTERVAL_MS = 100

/**
 * Starts the template's start command in the new sandbox, as its default user in its default
 * workdir, and returns once its ready command succeeds (wire contract §2.5): E2B snapshots a
 * template with the command already running; Sandbar starts it in each sandbox instead. A start
 * command that exits with an error fails the create; one that exits cleanly counts as ready.
 */
export async function startTemplateCommand(
  target: EnvdTarget,
  template: BootSettings,
  logger: Logger,
): Promise<void> {
  if (template.startCmd === undefined) return
  const client = new EnvdProcessClient(target)
  const started = await client.start(shellCommand(template.startCmd, template))
  logger.info({ pid: started.pid, startCmd: template.startCmd }, 'start command running')
  try {
    await waitUntilReady(client, template, started.ended)
  } finally {
    started.detach()
  }
}

async function waitUntilReady(
  client: EnvdProcessClient,
  template: BootSettings,
  ended: Promise<{ exitCode: number } | undefined>,
): Promise<void> {
  let exit: { exitCode: number } | undefined
  void ended.then((result) => {
    exit = result
  })
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (exit !== undefined) {
      if (exit.exitCode !== 0) {
        throw new Error(`start command failed with exit code ${exit.exitCode}`)
      }
      return
    }
    if (template.readyCmd === undefined) return
    const check = await client.run(shellCommand(template.readyCmd, template))
    if (check.exitCode === 0) return
    if (Date.now() > deadline) {
      throw new Error(`ready command timed out after ${READY_TIMEOUT_MS / 1000} s`)
    }
    await new Promise((resolve) => setTimeout(resolve, READY_INTERVAL_MS))
  }
}

/**
 * Runs `true` as the SDK's `commands.run` does (a login shell, the template's user and
 * workdir), so that a warm pool's sandbox has taken envd's first-command path before its client
 * comes: that client's first command is then as quick as its later ones.
 */
export async function takeFirstCommandPath(target: EnvdTarget, template: BootSettings) {
  const result = await new EnvdProcessClient(target).run(shellCommand('true', template))
  if (result.exitCode !== 0) throw new Error(`a first command exited with ${result.exitCode}`)
}

/** `/bin/bash -l -c <command>` as E2B runs template commands, as the template's user. */
function shellCommand(command: string, template: BootSettings): EnvdCommand {
  return {
    cmd: '/bin/bash',
    args: ['-l', '-c', command],
    user: template.defaultUser,
    cwd: template.defaultWorkdir,
  }
}
