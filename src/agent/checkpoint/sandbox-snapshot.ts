import {
  chmod,
  chown,
  copyFile,
  link,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod/mini'
import { elapsedMs } from '../../elapsed-ms.js'
import { hostNames } from '../host-names.js'
import type { SnapshotReport } from '../index.js'
import type { HostParts } from '../sandbox-host.js'
import type { SandboxRecord } from '../sandbox-record.js'
import { PAGES_IMAGE } from './page-images.js'
import {
  adoptCheckpoint,
  checkpointDir,
  dumpProcesses,
  imagesSize,
  restoreSandbox,
} from './sandbox-checkpoint.js'

/** Agent-side snapshot names: the caller's choice, safe as a directory name. */
const SNAPSHOT_ID = /^[a-z0-9][a-z0-9-]{0,99}$/

/** What a sandbox restored from a snapshot needs of its source, beside CRIU's images. */
const snapshotSourceSchema = z.object({
  /** The source's host IDs, which the images' user namespaces name (userns-image.ts). */
  idMap: z.object({ hostID: z.number(), size: z.number() }),
  /** The source's address, which sockets in the images are bound to. */
  address: z.string(),
  /** What the restored envd takes `/init` pushes with until the agent gives it its own. */
  envdControlSecret: z.string(),
  /** The layers a sandbox from the snapshot starts from, the snapshot's files on top. */
  layers: z.array(z.string()),
})

export type SnapshotSource = z.infer<typeof snapshotSourceSchema>

const SOURCE_FILE = 'source.json'
const IMAGES = 'images'

/** Snapshots' process images: `<dataDir>/snapshots/<snapshotID>/`. */
function snapshotsDir(parts: HostParts): string {
  return path.join(parts.config.dataDir, 'snapshots')
}

function snapshotDir(parts: HostParts, snapshotID: string): string {
  if (!SNAPSHOT_ID.test(snapshotID)) throw new Error(`invalid snapshot ID '${snapshotID}'`)
  return path.join(snapshotsDir(parts), snapshotID)
}

/**
 * Snapshots a running sandbox in place: frozen, its processes dumped with CRIU (left running)
 * and its files saved by `saveFiles`, then thawed. A crash midway leaves a directory without
 * its source file, which is no snapshot (readSnapshotSource) and is removed with it.
 */
export async function snapshotSandbox(
  parts: HostParts,
  record: SandboxRecord,
  snapshotID: string,
  files: { layerID: string; save: () => Promise<void> },
): Promise<SnapshotReport> {
  const dir = snapshotDir(parts, snapshotID)
  const images = path.join(dir, IMAGES)
  const { envdControlSecret, address } = record
  if (envdControlSecret === undefined || address === undefined) {
    throw new Error(`sandbox '${record.sandboxID}' has no envd control secret or address`)
  }
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const runtime = parts.runtimes.get(record.runtime)
  const container = hostNames(parts.config.prefix, record.sandboxID).container
  const frozen = performance.now()
  // Frozen first, so that the files saved are the ones the dumped processes had.
  await runtime.pause(container)
  try {
    await dumpProcesses(parts, record, images, { leaveRunning: true })
    await files.save()
  } finally {
    await runtime.resume(container)
  }
  // A restore's own tasks read the pages, as the restored sandbox's root (restoreSnapshot).
  for (const name of await readdir(images)) {
    if (PAGES_IMAGE.test(name)) await chmod(path.join(images, name), 0o644)
  }
  const frozenMs = elapsedMs(frozen)
  const source: SnapshotSource = {
    idMap: record.idMap,
    address,
    envdControlSecret,
    layers: [...(record.layers ?? []), files.layerID],
  }
  await writeFile(path.join(dir, `${SOURCE_FILE}.new`), JSON.stringify(source))
  await rename(path.join(dir, `${SOURCE_FILE}.new`), path.join(dir, SOURCE_FILE))
  return { layers: source.layers, frozenMs, imageBytes: await imagesSize(images) }
}

/** The snapshot's source, or undefined when there is no such (complete) snapshot. */
export async function readSnapshotSource(
  parts: HostParts,
  snapshotID: string,
): Promise<SnapshotSource | undefined> {
  const file = path.join(snapshotDir(parts, snapshotID), SOURCE_FILE)
  const text = await readFile(file, 'utf8').catch(() => undefined)
  return text === undefined ? undefined : snapshotSourceSchema.parse(JSON.parse(text))
}

/** The layers every snapshot on this host starts from: kept while the snapshot is. */
export async function snapshotLayers(parts: HostParts): Promise<string[]> {
  const names = await snapshotIDs(parts)
  const sources = await Promise.all(names.map((name) => readSnapshotSource(parts, name)))
  return sources.flatMap((source) => source?.layers ?? [])
}

/** Every snapshot directory's name, complete or not. */
export async function snapshotIDs(parts: HostParts): Promise<string[]> {
  return (await readdir(snapshotsDir(parts)).catch(() => [])).filter((name) =>
    SNAPSHOT_ID.test(name),
  )
}

export async function removeSnapshot(parts: HostParts, snapshotID: string): Promise<void> {
  await rm(snapshotDir(parts, snapshotID), { recursive: true, force: true })
}

/**
 * Replaces the processes of a sandbox just started (`record`, over the snapshot's layers) with
 * the snapshot's: a copy of its images, moved to this sandbox's host IDs and cgroups, restored
 * as a hibernated sandbox is (sandbox-checkpoint.ts), into this sandbox's root and network.
 */
export async function restoreSnapshot(
  parts: HostParts,
  record: SandboxRecord,
  snapshotID: string,
  source: SnapshotSource,
  layerDirs: string[],
): Promise<void> {
  const dir = checkpointDir(parts, record.sandboxID)
  await rm(dir, { recursive: true, force: true })
  // Root's and the sandbox's root group's, as a checkpoint of its own (dumpProcesses).
  await mkdir(dir, { mode: 0o750 })
  await chown(dir, 0, record.idMap.hostID)
  // The memory pages, most of a checkpoint, are shared: every restore links the snapshot's
  // (world-readable files in directories only root and a sandbox's root group walk into).
  // The rest is small, and adoptCheckpoint rewrites some of it.
  const images = path.join(snapshotDir(parts, snapshotID), IMAGES)
  for (const name of await readdir(images)) {
    const [from, to] = [path.join(images, name), path.join(dir, name)]
    if (PAGES_IMAGE.test(name)) {
      await link(from, to)
    } else {
      await copyFile(from, to)
      await chown(to, 0, record.idMap.hostID)
    }
  }
  await adoptCheckpoint(parts, record, source.idMap)
  await restoreSandbox(parts, record, layerDirs, source.address)
}
