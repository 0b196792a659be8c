import type { Insertable, Selectable, Updateable } from 'kysely'
import * as z from 'zod/mini'
import type { Template, TemplateBuild, TemplateBuildPatch } from './index.js'
import { jsonColumns } from './json-columns.js'
import type { TemplateBuildTable, TemplateTable } from './schema.js'

const buildStatus = z.enum(['waiting', 'building', 'ready', 'error'])

/** A template as one `templates` row (schema.ts conventions: epoch ms, 0/1). */
export function templateToRow(template: Template): Insertable<TemplateTable> {
  return {
    template_id: template.templateID,
    team_id: template.teamID,
    name: template.name,
    public: Number(template.public),
    created_at: template.createdAt.getTime(),
    updated_at: template.updatedAt.getTime(),
    last_spawned_at: template.lastSpawnedAt?.getTime() ?? null,
    spawn_count: template.spawnCount,
    deleted_at: template.deletedAt?.getTime() ?? null,
    source_sandbox_id: template.sourceSandboxID,
  }
}

/** The columns a template patch touches; fields it leaves out stay as stored. */
export function templatePatchToRow(
  patch: Partial<Pick<Template, 'public' | 'updatedAt' | 'deletedAt'>>,
): Updateable<TemplateTable> {
  return {
    public: patch.public === undefined ? undefined : Number(patch.public),
    updated_at: patch.updatedAt?.getTime(),
    deleted_at: patch.deletedAt === undefined ? undefined : (patch.deletedAt?.getTime() ?? null),
  }
}

export function templateFromRow(row: Selectable<TemplateTable>): Template {
  return {
    templateID: row.template_id,
    teamID: row.team_id,
    name: row.name,
    public: row.public === 1,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    lastSpawnedAt: dateOrNull(row.last_spawned_at),
    spawnCount: row.spawn_count,
    deletedAt: dateOrNull(row.deleted_at),
    sourceSandboxID: row.source_sandbox_id,
  }
}

/** A build as one `template_builds` row; tags, result and failure as JSON text. */
export function buildToRow(build: TemplateBuild): Insertable<TemplateBuildTable> {
  return {
    build_id: build.buildID,
    template_id: build.templateID,
    status: build.status,
    created_at: build.createdAt.getTime(),
    updated_at: build.updatedAt.getTime(),
    finished_at: build.finishedAt?.getTime() ?? null,
    cpu_count: build.cpuCount,
    memory_mb: build.memoryMB,
    disk_size_mb: build.diskSizeMB,
    envd_version: build.envdVersion,
    tags: JSON.stringify(build.tags),
    result: jsonOrNull(build.result),
    failure: jsonOrNull(build.failure),
  }
}

/** The columns a build patch touches; fields it leaves out stay as stored. */
export function buildPatchToRow(patch: TemplateBuildPatch): Updateable<TemplateBuildTable> {
  return {
    status: patch.status,
    updated_at: patch.updatedAt?.getTime(),
    finished_at: patch.finishedAt === undefined ? undefined : (patch.finishedAt?.getTime() ?? null),
    envd_version: patch.envdVersion,
    result: patch.result === undefined ? undefined : jsonOrNull(patch.result),
    failure: patch.failure === undefined ? undefined : jsonOrNull(patch.failure),
  }
}

export function buildFromRow(row: Selectable<TemplateBuildTable>): TemplateBuild {
  return {
    buildID: row.build_id,
    templateID: row.template_id,
    status: buildStatus.parse(row.status),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    finishedAt: dateOrNull(row.finished_at),
    cpuCount: row.cpu_count,
    memoryMB: row.memory_mb,
    diskSizeMB: row.disk_size_mb,
    envdVersion: row.envd_version,
    tags: jsonColumns.stringList(row.tags),
    result: row.result === null ? null : jsonColumns.buildResult(row.result),
    failure: row.failure === null ? null : jsonColumns.buildFailure(row.failure),
  }
}

function dateOrNull(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms)
}

function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value)
}
