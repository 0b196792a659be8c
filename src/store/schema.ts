import type { Generated } from 'kysely'

/**
 * The store's tables, identical on SQLite and PostgreSQL (made by migrations/).
 *
 * Column conventions, chosen so one query text means the same on both dialects:
 * - timestamps (`*_at`, `ts`) are epoch milliseconds in a `bigint` column; PostgreSQL's int8
 *   is parsed to a JS number by postgres-store.ts, SQLite returns numbers already;
 * - JSON values are `text` holding JSON, decoded with zod in json-columns.ts;
 * - booleans are integers 0/1 (SQLite has no boolean and better-sqlite3 binds none);
 * - IDs are text (uuid for teams and keys, E2B's own format for sandboxes).
 */
export interface Database {
  teams: TeamTable
  api_keys: ApiKeyTable
  sandboxes: SandboxTable
  sandbox_metadata: SandboxMetadataTable
  sandbox_logs: SandboxLogTable
  sandbox_metrics: SandboxMetricTable
  sandbox_output_cursors: SandboxOutputCursorTable
  templates: TemplateTable
  template_builds: TemplateBuildTable
  template_tags: TemplateTagTable
  template_build_logs: TemplateBuildLogTable
  volumes: VolumeTable
}

export interface TeamTable {
  id: string
  name: string
  slug: string
  created_at: number
}

export interface ApiKeyTable {
  id: string
  team_id: string
  name: string
  key_hash: string
  mask_prefix: string
  mask_value_length: number
  mask_value_prefix: string
  mask_value_suffix: string
  created_at: number
  last_used_at: number | null
}

export interface SandboxTable {
  sandbox_id: string
  team_id: string
  template_id: string
  alias: string | null
  state: string
  started_at: number
  end_at: number
  max_end_at: number
  cpu_count: number
  memory_mb: number
  disk_size_mb: number
  metadata: string
  env_vars: string
  envd_access_token: string | null
  traffic_access_token: string | null
  allow_internet_access: number | null
  network: string
  lifecycle: string
  envd_version: string
  /** JSON `[{volumeID, name, path}]`. */
  volume_mounts: string
  /** The build it started from; null for rows from before snapshots. */
  build_id: string | null
}

/**
 * One row per metadata pair of a sandbox: the metadata filter of `GET /v2/sandboxes` as a
 * plain join, since SQLite's and PostgreSQL's JSON operators read keys differently.
 */
export interface SandboxMetadataTable {
  sandbox_id: string
  key: string
  value: string
}

export interface SandboxLogTable {
  id: Generated<number>
  team_id: string
  sandbox_id: string
  ts: number
  level: string
  message: string
  fields: string
}

export interface SandboxMetricTable {
  team_id: string
  sandbox_id: string
  ts: number
  cpu_count: number
  cpu_used_pct: number
  mem_used: number
  mem_total: number
  mem_cache: number
  disk_used: number
  disk_total: number
}

/** How many bytes of a sandbox's output are already in its logs. */
export interface SandboxOutputCursorTable {
  sandbox_id: string
  bytes_read: number
}

/** A template; `deleted_at` set means deleted, and its name is free for a new template. */
export interface TemplateTable {
  template_id: string
  team_id: string
  name: string
  public: number
  created_at: number
  updated_at: number
  last_spawned_at: number | null
  spawn_count: number
  deleted_at: number | null
  /** Set for a snapshot template: the sandbox it was first taken from. */
  source_sandbox_id: string | null
}

export interface TemplateBuildTable {
  build_id: string
  template_id: string
  status: string
  created_at: number
  updated_at: number
  finished_at: number | null
  cpu_count: number
  memory_mb: number
  disk_size_mb: number
  envd_version: string | null
  /** JSON array of the tags the build takes when ready. */
  tags: string
  /** JSON `BuildResult`, once ready. */
  result: string | null
  /** JSON `BuildFailure`, once failed. */
  failure: string | null
}

export interface TemplateTagTable {
  template_id: string
  tag: string
  build_id: string
  created_at: number
}

export interface TemplateBuildLogTable {
  id: Generated<number>
  build_id: string
  ts: number
  level: string
  message: string
  step: string | null
}

/** A volume; `deleted_at` set means deleted: its name is free, its data not yet removed. */
export interface VolumeTable {
  volume_id: string
  team_id: string
  name: string
  size_mb: number
  created_at: number
  deleted_at: number | null
}
