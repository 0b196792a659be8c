import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { errnoCode } from '../../errno-code.js'
import type { Logger } from '../../logger.js'
import { isProcessRunning, pidInName } from '../../process-alive.js'
import { runHostCommand } from '../host-command.js'
import type { LayerStore } from '../index.js'
import { pathExists } from '../path-exists.js'
import { mountsUnder } from './mountinfo.js'

/**
 * Layer IDs the builder chooses: content addresses, short enough that a deep stack still fits
 * one overlay mount's option page (host-facts § Overlay layer count).
 */
const LAYER_ID = /^[a-z0-9][a-z0-9-]{7,63}$/

/** A layer being made: `<prefix><builder pid>-<random>`, renamed into place when complete. */
const ADDING_PREFIX = '.adding-'

/** Template layers on this host, one directory each under `dir`, owned as in the image. */
export class HostLayerStore implements LayerStore {
  /** Layers being made in this process, by ID: concurrent adds of one layer share the work. */
  private readonly adding = new Map<string, Promise<void>>()

  constructor(
    readonly dir: string,
    /** Layer IDs that sandboxes on this host stack: never collected. */
    private readonly layersOfSandboxes: () => Promise<Set<string>>,
    private readonly logger: Logger,
  ) {}

  /**
   * Prepares the directory and removes what an interrupted add left: its temp directory, and
   * first anything still mounted inside it (mmdebstrap mounts /proc, /sys and /dev there while
   * it builds, and a kill mid-build leaves them).
   */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    // Only root enters: layer files keep the image's owners (uid 1000 owns /home/user), who
    // may be host users too; sandboxes reach layers only through their idmapped mounts.
    await chmod(this.dir, 0o700)
    for (const name of await readdir(this.dir)) {
      if (!name.startsWith(ADDING_PREFIX)) continue
      const pid = pidInName(name, ADDING_PREFIX)
      if (pid !== undefined && isProcessRunning(pid)) continue
      await removeTree(path.join(this.dir, name), this.logger)
    }
  }

  /** The layer's directory; throws for an ID that is not one. */
  path(layerID: string): string {
    if (!LAYER_ID.test(layerID)) throw new Error(`invalid layer ID '${layerID}'`)
    return path.join(this.dir, layerID)
  }

  has(layerID: string): Promise<boolean> {
    return pathExists(this.path(layerID))
  }

  add(layerID: string, fill: (dir: string) => Promise<void>): Promise<void> {
    const running = this.adding.get(layerID)
    if (running !== undefined) return running
    const adding = this.make(layerID, fill).finally(() => this.adding.delete(layerID))
    this.adding.set(layerID, adding)
    return adding
  }

  async collect(keep: ReadonlySet<string>): Promise<string[]> {
    const used = await this.layersOfSandboxes()
    const removed: string[] = []
    for (const name of await readdir(this.dir)) {
      if (!LAYER_ID.test(name) || keep.has(name) || used.has(name) || this.adding.has(name)) {
        continue
      }
      await removeTree(path.join(this.dir, name), this.logger)
      removed.push(name)
    }
    if (removed.length > 0) this.logger.info({ layers: removed }, 'removed unused layers')
    return removed
  }

  async squash(layerIDs: readonly string[], layerID: string): Promise<void> {
    const lower = layerIDs.map((id) => path.basename(this.path(id)))
    if (lower.length < 2) throw new Error('squashing takes two layers or more')
    await this.add(layerID, async (dir) => {
      // Inside an adding directory of its own, so open() after a crash detaches and removes it.
      const merged = await mkdtemp(path.join(this.dir, `${ADDING_PREFIX}${process.pid}-merged-`))
      try {
        // A read-only overlay of the stack (no upper): whiteouts and opaque directories are
        // already applied in what it shows. Names relative to the layer directory keep the
        // mount's one-page option string short (host-facts § Overlay layer count).
        const lowerdir = [...lower].reverse().join(':')
        await runHostCommand(
          'mount',
          ['-t', 'overlay', '-o', `ro,lowerdir=${lowerdir}`, 'overlay', merged],
          {
            cwd: this.dir,
          },
        )
        try {
          await runHostCommand('cp', ['-a', `${merged}/.`, dir])
        } finally {
          // Lazily: anything walking the layer directory (a backup, a file indexer) may hold
          // the overlay, and the copy needs nothing more from it.
          await runHostCommand('umount', ['-l', merged])
        }
      } finally {
        await rm(merged, { recursive: true, force: true })
      }
    })
  }

  private async make(layerID: string, fill: (dir: string) => Promise<void>): Promise<void> {
    const target = this.path(layerID)
    if (await pathExists(target)) return
    // The PID in the name tells a crashed add from one still running in another process.
    const temp = await mkdtemp(path.join(this.dir, `${ADDING_PREFIX}${process.pid}-`))
    try {
      await fill(temp)
      // mkdtemp made it 0700; an image's `/` is 0755.
      await chmod(temp, 0o755)
      // Atomic on one filesystem: a crash never leaves half a layer under its final name.
      await rename(temp, target).catch((error: unknown) => {
        // Another process sharing the directory made the same layer first: it is the same.
        const code = errnoCode(error)
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
      })
    } finally {
      await removeTree(temp, this.logger)
    }
  }
}

/**
 * Removes a directory tree, detaching whatever is mounted inside it first: rm would otherwise
 * descend into a still-mounted /proc or /dev and delete host objects.
 */
async function removeTree(dir: string, logger: Logger): Promise<void> {
  const mounts = await mountsUnder(dir)
  if (mounts.length > 0) {
    logger.warn({ dir, mounts }, 'detaching mounts an interrupted layer build left')
    // Deepest first, lazily: a process of the dead build may still hold one.
    for (const mount of mounts.sort((a, b) => b.length - a.length)) {
      await runHostCommand('umount', ['-l', mount])
    }
  }
  await rm(dir, { recursive: true, force: true })
}
