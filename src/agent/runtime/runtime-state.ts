import * as z from 'zod/mini'
import { AgentError } from '../errors.js'
import type { ContainerState } from './runtime.js'

const containerStatus = z.enum(['creating', 'created', 'running', 'paused', 'stopped'])

/** `state <id>` and each `list --format json` entry: the OCI state (runtime-spec § State). */
const stateSchema = z.object({
  id: z.string(),
  pid: z.number(),
  status: containerStatus,
  bundle: z.string(),
})

/** runc prints `null` for an empty list (crun an empty array). */
const listSchema = z.nullable(z.array(stateSchema))

/** A container's state plus its bundle directory, where its config.json is. */
export type ContainerRecord = ContainerState & { bundle: string }

export function parseStateOutput(stdout: string): ContainerRecord {
  return toRecord(stateSchema.parse(JSON.parse(stdout)))
}

export function parseListOutput(stdout: string): ContainerRecord[] {
  return (listSchema.parse(JSON.parse(stdout)) ?? []).map(toRecord)
}

function toRecord(state: z.infer<typeof stateSchema>): ContainerRecord {
  // A stopped container's init is gone; runc still prints its old PID.
  const pid = state.status === 'stopped' ? 0 : state.pid
  return { id: state.id, status: state.status, pid, bundle: state.bundle }
}

/**
 * Whether a failed call says the container does not exist. crun: "error opening file
 * `…/status`: No such file or directory"; runc: "container does not exist"; runsc: "file does
 * not exist".
 */
export function isUnknownContainer(error: unknown): boolean {
  return (
    error instanceof AgentError &&
    /does not exist|no such file or directory|not found/i.test(error.stderr)
  )
}
