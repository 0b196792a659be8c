import { randomUUID } from 'node:crypto'
import type { Agent, VolumeUsage } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store, Team, Volume } from '../store/index.js'
import { apiErrors } from './errors.js'
import type { VolumeTokens } from './volume-tokens.js'

/** wave2-contracts §2.1 `NewVolume.name`. */
const VOLUME_NAME = /^[a-zA-Z0-9_-]+$/
/** Longer names than this are refused with the same message: they are no one's real names. */
const MAX_NAME_LENGTH = 255
/** The smallest ext4 filesystem the agent makes (disk-image.ts). */
export const MIN_VOLUME_SIZE_MB = 16
/** 1 TiB: images are sparse, but a larger one's metadata alone takes long to make. */
export const MAX_VOLUME_SIZE_MB = 1024 * 1024
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Volume settings of `sandbar serve`. */
export interface VolumeServiceConfig {
  /** The size of a volume whose create names none (`--volume-size-mb`). */
  defaultSizeMB: number
}

/** A volume with a fresh token and what it uses (wave2-contracts §2.1 `VolumeAndToken`). */
export interface VolumeWithToken {
  volume: Volume
  token: string
  usage: VolumeUsage
}

/**
 * Volumes of a team (issue 15): the store holds each one's row, the agent its data. A create
 * writes the row first, so a crash before the data is made leaves a row that the next start
 * makes the data for (`ensureVolumes`); a delete marks the row at once (the name is free) and
 * leaves the data to volume-collection.ts.
 */
export class VolumeService {
  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly tokens: VolumeTokens,
    private readonly config: VolumeServiceConfig,
    private readonly logger: Logger,
    /** Called after a delete: the data may go now. */
    private readonly released: () => void,
  ) {}

  async create(team: Team, name: string, sizeMB?: number): Promise<VolumeWithToken> {
    if (!VOLUME_NAME.test(name) || name.length > MAX_NAME_LENGTH) {
      throw apiErrors.invalidVolumeName()
    }
    const size = sizeMB ?? this.config.defaultSizeMB
    if (!Number.isInteger(size) || size < MIN_VOLUME_SIZE_MB || size > MAX_VOLUME_SIZE_MB) {
      throw apiErrors.volumeSize(MIN_VOLUME_SIZE_MB, MAX_VOLUME_SIZE_MB)
    }
    if ((await this.store.findVolume(team.id, name)) !== undefined) {
      throw apiErrors.volumeNameTaken(name)
    }
    const volume: Volume = {
      volumeID: randomUUID(),
      teamID: team.id,
      name,
      sizeMB: size,
      createdAt: new Date(),
      deletedAt: null,
    }
    try {
      await this.store.insertVolume(volume)
    } catch (error) {
      // The same name created meanwhile: the store's index refused the second.
      if ((await this.store.findVolume(team.id, name)) !== undefined) {
        throw apiErrors.volumeNameTaken(name)
      }
      throw error
    }
    const log = this.logger.child({ volumeID: volume.volumeID })
    try {
      await this.agent.volumes.create(volume.volumeID, size)
    } catch (error) {
      log.error({ err: error }, 'volume create failed')
      await this.store.deleteVolume(volume.volumeID, team.id, new Date())
      this.released()
      throw apiErrors.volumeCreateFailed()
    }
    log.info({ name, sizeMB: size }, 'volume created')
    return this.withToken(volume)
  }

  list(team: Team): Promise<Volume[]> {
    return this.store.listVolumes(team.id)
  }

  async get(team: Team, volumeID: string): Promise<VolumeWithToken> {
    return this.withToken(await this.existing(team, volumeID))
  }

  async delete(team: Team, volumeID: string): Promise<void> {
    const volume = await this.existing(team, volumeID)
    if (!(await this.store.deleteVolume(volume.volumeID, team.id, new Date()))) {
      throw apiErrors.volumeNotFound()
    }
    this.logger.info({ volumeID }, 'volume deleted; its data goes once no sandbox mounts it')
    this.released()
  }

  private async existing(team: Team, volumeID: string): Promise<Volume> {
    const volume = UUID.test(volumeID) ? await this.store.getVolume(volumeID, team.id) : undefined
    if (volume === undefined) throw apiErrors.volumeNotFound()
    return volume
  }

  private async withToken(volume: Volume): Promise<VolumeWithToken> {
    const [token, usage] = await Promise.all([
      this.tokens.mint({ teamID: volume.teamID, volumeID: volume.volumeID }),
      this.agent.volumes.usage(volume.volumeID),
    ])
    return { volume, token, usage }
  }
}

/**
 * At start: makes the data of every live volume the host lacks (a create the previous process
 * did not finish; nothing was ever written to it), and reports volumes on the host that the
 * store does not know, which are left alone: they may be another install's.
 */
export async function ensureVolumes(store: Store, agent: Agent, logger: Logger): Promise<void> {
  const known = await store.allVolumeIDs()
  const deleted = new Set((await store.deletedVolumes()).map((volume) => volume.volumeID))
  const onHost = new Set(await agent.volumes.list())
  for (const volumeID of known) {
    if (deleted.has(volumeID) || onHost.has(volumeID)) continue
    const volume = await store.getVolume(volumeID)
    if (volume === undefined) continue
    logger.warn({ volumeID }, 'volume has no data on this host; making it empty')
    await agent.volumes.create(volumeID, volume.sizeMB)
  }
  for (const volumeID of onHost) {
    if (!known.has(volumeID)) logger.warn({ volumeID }, 'volume on this host is not in the store')
  }
}
