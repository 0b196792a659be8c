import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod/mini'
import { fileVersion } from '../file-version.js'
import { RUNTIME_NAMES } from './runtime/runtime.js'

const recordSchema = z.object({
  sandboxID: z.string(),
  templateID: z.string(),
  /** The template's layer IDs, lowest first (absent in records made before templates). */
  layers: z.optional(z.array(z.string())),
  /** A builder's sandbox (SandboxRequest.build). */
  build: z.optional(z.boolean()),
  runtime: z.enum(RUNTIME_NAMES),
  slot: z.number(),
  /** The sandbox's address, once its network exists. */
  address: z.optional(z.string()),
  /** The host IDs of the sandbox's IDs 0…size-1 (user-namespace.ts, sandboxIDMap). */
  idMap: z.object({ hostID: z.number(), size: z.number() }),
  cpuCount: z.number(),
  memoryMB: z.number(),
  diskSizeMB: z.number(),
  envVars: z.record(z.string(), z.string()),
  accessToken: z.optional(z.string()),
  /**
   * Authorizes the agent's `/init` pushes to the sandbox's envd, which got it in its handover.
   * Optional only so that records of sandboxes started before it existed still parse.
   */
  envdControlSecret: z.optional(z.string()),
  egress: z.object({ allowOut: z.array(z.string()), denyOut: z.array(z.string()) }),
  state: z.enum(['creating', 'running', 'paused']),
  /** A paused sandbox whose processes CRIU wrote to its checkpoint directory and ended. */
  hibernated: z.optional(z.boolean()),
  /** The size of a hibernated sandbox's checkpoint, in bytes. */
  checkpointBytes: z.optional(z.number()),
  /** A paused sandbox whose processes were ended, its files kept: its resume boots it. */
  filesOnly: z.optional(z.boolean()),
  /**
   * What booting it again needs of its template beside the layers (SandboxTemplate). Absent in
   * records made before files-only pauses, whose sandboxes cannot be paused that way.
   */
  boot: z.optional(
    z.object({
      defaultUser: z.string(),
      defaultWorkdir: z.string(),
      startCmd: z.optional(z.string()),
      readyCmd: z.optional(z.string()),
    }),
  ),
  createdAt: z.string(),
  /** A warm pool's sandbox that no client has claimed yet (SandboxRequest.warm). */
  warm: z.optional(z.boolean()),
  /**
   * A warm pool's sandbox waiting at the lowest CPU weight: its cgroup's weight file and the
   * value its size gives, put back when a client claims it (waiting-cpu-weight.ts).
   */
  waitingCpuWeight: z.optional(z.object({ file: z.string(), value: z.string() })),
})

/**
 * What the agent remembers about one sandbox, in `<dataDir>/sandboxes/<id>/sandbox.json`.
 * Written before any host object exists, so a crash mid-create leaves a record that reconcile
 * finds and cleans up.
 */
export type SandboxRecord = z.infer<typeof recordSchema>

/**
 * The agent's sandbox records on disk. Reads are on the path of every request the proxy
 * forwards, so each record stays parsed in memory for as long as its file is the one read:
 * every save renames a new file into place, which a file's inode and change time tell apart.
 */
export class SandboxRecords {
  private readonly parsed = new Map<string, { version: string; record: SandboxRecord }>()

  constructor(private readonly root: string) {}

  dir(sandboxID: string): string {
    return path.join(this.root, sandboxID)
  }

  /**
   * Writes atomically (temp file + rename), so a crash never leaves half a record. Synchronous,
   * as `read` is: a claim saves on a create's critical path, where five thread-pool round trips
   * cost ~2 ms and the writes themselves microseconds.
   */
  async save(record: SandboxRecord): Promise<void> {
    const dir = this.dir(record.sandboxID)
    mkdirSync(dir, { recursive: true, mode: 0o711 })
    const temp = path.join(dir, 'sandbox.json.tmp')
    writeFileSync(temp, JSON.stringify(record, null, 2), { mode: 0o600 })
    renameSync(temp, path.join(dir, 'sandbox.json'))
  }

  /** Every readable record; a directory without a valid record is reported as undefined. */
  async all(): Promise<{ sandboxID: string; record: SandboxRecord | undefined }[]> {
    const names = await readdir(this.root).catch(() => [])
    return Promise.all(
      names.map(async (sandboxID) => ({ sandboxID, record: await this.read(sandboxID) })),
    )
  }

  async read(sandboxID: string): Promise<SandboxRecord | undefined> {
    const file = path.join(this.dir(sandboxID), 'sandbox.json')
    // Synchronous: a stat and a small read of a local file take microseconds, where each
    // asynchronous call is a thread-pool round trip.
    const version = fileVersion(file)
    if (version === undefined) {
      this.parsed.delete(sandboxID)
      return undefined
    }
    const known = this.parsed.get(sandboxID)
    if (known?.version === version) return known.record
    const record = parseRecord(readOptional(file))
    if (record === undefined) this.parsed.delete(sandboxID)
    else this.parsed.set(sandboxID, { version, record })
    return record
  }

  /** Removes the sandbox's directory (record, upper layer, bundle). Unmount first. */
  async remove(sandboxID: string): Promise<void> {
    this.parsed.delete(sandboxID)
    await rm(this.dir(sandboxID), { recursive: true, force: true })
  }
}

function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * A torn or corrupt file is no record: reconcile then removes the sandbox's host objects by
 * name, instead of one bad file stopping every start.
 */
function parseRecord(text: string | undefined): SandboxRecord | undefined {
  if (text === undefined) return undefined
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  const parsed = recordSchema.safeParse(json)
  return parsed.success ? parsed.data : undefined
}

/** The lowest network slot no record holds. */
export function freeSlot(taken: Iterable<number>): number {
  const used = new Set(taken)
  let slot = 0
  while (used.has(slot)) slot++
  return slot
}
