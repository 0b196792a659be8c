/**
 * envd's front door: the running envd (start-envd.ts) and the host-side client the agent and
 * builder reach it with. envd's own bundle enters by main.ts, which imports start-envd.ts
 * alone, so that a sandbox's envd does not load the client's protobuf descriptors at start.
 */

/** The host-side client the agent and builder run sandbox commands with. */
export {
  type EnvdCommand,
  type EnvdCommandResult,
  EnvdProcessClient,
  type EnvdTarget,
  type StartedCommand,
} from './client/process-client.js'
export { ENVD_CONTROL_HEADER, type EnvdHandover, encodeHandover } from './handover.js'
/** The PATH a process gets when it brings none: what the agent and builder give too. */
export { DEFAULT_PATH } from './process/process-env.js'
export { RUN_AS_FILE } from './process/run-as-path.js'
export {
  type Envd,
  type EnvdOptions,
  runEnvdCommand,
  startEnvd,
} from './start-envd.js'
export { ENVD_PORT, ENVD_VERSION } from './version.js'
