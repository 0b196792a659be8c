import { createHash } from 'node:crypto'
import { chmod, mkdir, open, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import { pathExists } from '../path-exists.js'
import { makeDiskImage, mkfsArgs } from './disk-image.js'

/** `<size>M-<hash of its mkfs arguments>.img`: a blank made with other settings is stale. */
const BLANK_NAME = /^(\d+)M-[0-9a-f]{16}\.img$/

/**
 * Empty sandbox disks, one per size, each made once by mkfs.ext4 and copied for every sandbox
 * of that size. mkfs reads the host's mount table and loop devices, which grow with the
 * sandboxes (5 ms on an empty host, 18–24 ms beside 400 sandboxes); a sparse copy reads only
 * the blank. The copies share ext4's UUID and directory hash seed: the kernel needs neither to
 * be unique, and a sandbox gets no block device to read its superblock from.
 */
export class BlankDisks {
  /** Blanks being made or made in this process, by file name. */
  private readonly blanks = new Map<string, Promise<string>>()

  constructor(readonly dir: string) {}

  /** Prepares the directory and removes stale blanks and what an interrupted make left. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    await chmod(this.dir, 0o700)
    for (const name of await readdir(this.dir)) {
      const match = BLANK_NAME.exec(name)
      if (match !== null && name === blankName(Number(match[1]))) continue
      await rm(path.join(this.dir, name), { force: true })
    }
  }

  /** Makes `image`, which must not exist, an empty disk of `sizeMB`: sparse, ext4, no journal. */
  async copy(image: string, sizeMB: number): Promise<void> {
    const blank = await this.blank(sizeMB)
    // Created first, exclusively: the copy never overwrites a disk that is there.
    const handle = await open(image, 'wx', 0o600)
    await handle.close()
    await runHostCommand('cp', ['--sparse=always', blank, image])
  }

  private blank(sizeMB: number): Promise<string> {
    const name = blankName(sizeMB)
    let blank = this.blanks.get(name)
    if (blank === undefined) {
      blank = this.make(name, sizeMB)
      // A failed make is tried again by the next copy.
      blank.catch(() => this.blanks.delete(name))
      this.blanks.set(name, blank)
    }
    return blank
  }

  private async make(name: string, sizeMB: number): Promise<string> {
    const blank = path.join(this.dir, name)
    if (await pathExists(blank)) return blank
    // Renamed into place whole: a crash mid-mkfs leaves only a temp, which open() removes.
    const temp = path.join(this.dir, `.${name}.${process.pid}`)
    await rm(temp, { force: true })
    try {
      await makeDiskImage(temp, sizeMB)
      await rename(temp, blank)
    } finally {
      await rm(temp, { force: true })
    }
    return blank
  }
}

function blankName(sizeMB: number): string {
  const hash = createHash('sha256').update(mkfsArgs('', sizeMB).join('\0')).digest('hex')
  return `${sizeMB}M-${hash.slice(0, 16)}.img`
}
