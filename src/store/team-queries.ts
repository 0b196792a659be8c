import { randomUUID } from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import { generateApiKey, hashApiKey } from './api-key.js'
import type { ApiKey, Team } from './index.js'
import type { Database, TeamTable } from './schema.js'

/** The team `sandbar serve` creates on first start; its slug is its template namespace. */
const FIRST_TEAM = { name: 'default', slug: 'default' }

/**
 * How stale a key's `last_used_at` may be. Every authenticated request reads the key, and a
 * write per request would put a database commit on every API call's path.
 */
export const LAST_USED_RESOLUTION_MS = 60_000

/** Teams and their API keys (the `Store` methods of the same names). */
export function teamQueries(db: Kysely<Database>) {
  return {
    async ensureFirstTeam(): Promise<{ team: Team; created: boolean }> {
      // The unique slug makes this safe when two api instances start on one PostgreSQL.
      const inserted = await db
        .insertInto('teams')
        .values({ id: randomUUID(), ...FIRST_TEAM, created_at: Date.now() })
        .onConflict((conflict) => conflict.column('slug').doNothing())
        .returning('id')
        .executeTakeFirst()
      const row = await db
        .selectFrom('teams')
        .selectAll()
        .where('slug', '=', FIRST_TEAM.slug)
        .executeTakeFirstOrThrow()
      return { team: teamFromRow(row), created: inserted !== undefined }
    },

    async createTeam(name: string, slug: string): Promise<Team> {
      const team: Team = { id: randomUUID(), name, slug, createdAt: new Date() }
      await db
        .insertInto('teams')
        .values({ id: team.id, name, slug, created_at: team.createdAt.getTime() })
        .execute()
      return team
    },

    async createApiKey(teamID: string, name: string): Promise<{ apiKey: ApiKey; key: string }> {
      const { key, hash, mask } = generateApiKey()
      const apiKey: ApiKey = {
        id: randomUUID(),
        teamID,
        name,
        mask,
        createdAt: new Date(),
        lastUsedAt: null,
      }
      await db
        .insertInto('api_keys')
        .values({
          id: apiKey.id,
          team_id: teamID,
          name,
          key_hash: hash,
          mask_prefix: mask.prefix,
          mask_value_length: mask.valueLength,
          mask_value_prefix: mask.maskedValuePrefix,
          mask_value_suffix: mask.maskedValueSuffix,
          created_at: apiKey.createdAt.getTime(),
        })
        .execute()
      return { apiKey, key }
    },

    async findTeamBySlug(slug: string): Promise<Team | undefined> {
      const row = await db
        .selectFrom('teams')
        .selectAll()
        .where('slug', '=', slug)
        .executeTakeFirst()
      return row === undefined ? undefined : teamFromRow(row)
    },

    async teamForApiKey(key: string): Promise<Team | undefined> {
      const hash = hashApiKey(key)
      if (hash === undefined) return undefined
      const row = await db
        .selectFrom('api_keys')
        .innerJoin('teams', 'teams.id', 'api_keys.team_id')
        .select(['teams.id', 'teams.name', 'teams.slug', 'teams.created_at'])
        .select(['api_keys.id as key_id', 'api_keys.last_used_at'])
        .where('api_keys.key_hash', '=', hash)
        .executeTakeFirst()
      if (row === undefined) return undefined
      const now = Date.now()
      if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
        await db
          .updateTable('api_keys')
          .set({ last_used_at: now })
          .where('id', '=', row.key_id)
          .execute()
      }
      return teamFromRow(row)
    },
  }
}

function teamFromRow(row: Selectable<TeamTable>): Team {
  return { id: row.id, name: row.name, slug: row.slug, createdAt: new Date(row.created_at) }
}
