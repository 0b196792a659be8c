import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Sandbox, SandboxPatch, SandboxState } from './index.js'
import { jsonColumns } from './json-columns.js'
import type { SandboxTable } from './schema.js'
import type { TokenColumn, TokenSeal } from './token-seal.js'

/**
 * A sandbox as one `sandboxes` row (schema.ts conventions: epoch ms, JSON text, 0/1); its
 * tokens sealed (token-seal.ts).
 */
export function sandboxToRow(sandbox: Sandbox, seal: TokenSeal): Insertable<SandboxTable> {
  const sealed = (column: TokenColumn, token: string | null) =>
    token === null ? null : seal.seal(sandbox.sandboxID, column, token)
  return {
    sandbox_id: sandbox.sandboxID,
    team_id: sandbox.teamID,
    template_id: sandbox.templateID,
    alias: sandbox.alias,
    state: sandbox.state,
    started_at: sandbox.startedAt.getTime(),
    end_at: sandbox.endAt.getTime(),
    max_end_at: sandbox.maxEndAt.getTime(),
    cpu_count: sandbox.cpuCount,
    memory_mb: sandbox.memoryMB,
    disk_size_mb: sandbox.diskSizeMB,
    metadata: JSON.stringify(sandbox.metadata),
    env_vars: JSON.stringify(sandbox.envVars),
    envd_access_token: sealed('envd_access_token', sandbox.envdAccessToken),
    traffic_access_token: sealed('traffic_access_token', sandbox.trafficAccessToken),
    allow_internet_access: booleanToRow(sandbox.allowInternetAccess),
    network: JSON.stringify(sandbox.network),
    lifecycle: JSON.stringify(sandbox.lifecycle),
    envd_version: sandbox.envdVersion,
    volume_mounts: JSON.stringify(sandbox.volumeMounts),
    build_id: sandbox.buildID,
  }
}

/** The columns a patch touches; fields it leaves out stay as stored. */
export function patchToRow(patch: SandboxPatch): Updateable<SandboxTable> {
  return {
    state: patch.state,
    started_at: patch.startedAt?.getTime(),
    end_at: patch.endAt?.getTime(),
    max_end_at: patch.maxEndAt?.getTime(),
    network: patch.network === undefined ? undefined : JSON.stringify(patch.network),
    allow_internet_access:
      patch.allowInternetAccess === undefined ? undefined : booleanToRow(patch.allowInternetAccess),
    lifecycle: patch.lifecycle === undefined ? undefined : JSON.stringify(patch.lifecycle),
  }
}

export function sandboxFromRow(row: Selectable<SandboxTable>, seal: TokenSeal): Sandbox {
  const opened = (column: TokenColumn) => {
    const value = row[column]
    return value === null ? null : seal.open(row.sandbox_id, column, value)
  }
  return {
    sandboxID: row.sandbox_id,
    teamID: row.team_id,
    templateID: row.template_id,
    alias: row.alias,
    state: stateFromRow(row.state),
    startedAt: new Date(row.started_at),
    endAt: new Date(row.end_at),
    maxEndAt: new Date(row.max_end_at),
    cpuCount: row.cpu_count,
    memoryMB: row.memory_mb,
    diskSizeMB: row.disk_size_mb,
    metadata: jsonColumns.stringMap(row.metadata),
    envVars: jsonColumns.stringMap(row.env_vars),
    envdAccessToken: opened('envd_access_token'),
    trafficAccessToken: opened('traffic_access_token'),
    allowInternetAccess:
      row.allow_internet_access === null ? null : row.allow_internet_access === 1,
    network: jsonColumns.network(row.network),
    lifecycle: jsonColumns.lifecycle(row.lifecycle),
    envdVersion: row.envd_version,
    volumeMounts: jsonColumns.volumeMounts(row.volume_mounts),
    buildID: row.build_id,
  }
}

function booleanToRow(value: boolean | null): number | null {
  return value === null ? null : Number(value)
}

function stateFromRow(state: string): SandboxState {
  if (state === 'starting' || state === 'running' || state === 'paused' || state === 'killing')
    return state
  throw new Error(`sandbox row has unknown state ${JSON.stringify(state)}`)
}
