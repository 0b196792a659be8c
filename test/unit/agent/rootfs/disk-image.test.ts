import { describe, expect, it } from 'vitest'
import { INODES_PER_MB, mkfsArgs } from '../../../../src/agent/rootfs/disk-image.js'

describe('mkfsArgs', () => {
  it('bounds inodes by the size, reserves nothing for host root, skips the journal', () => {
    expect(mkfsArgs('/d/disk.img', 512)).toEqual([
      '-q',
      '-F',
      ...['-N', String(512 * INODES_PER_MB)],
      ...['-m', '0'],
      ...['-E', 'lazy_itable_init=1,lazy_journal_init=1'],
      ...['-O', '^has_journal'],
      '/d/disk.img',
      '512M',
    ])
  })

  it("keeps ext4's journal when asked, as a volume's disk is", () => {
    const args = mkfsArgs('/d/volume.img', 1024, { journal: true })
    expect(args).not.toContain('^has_journal')
    expect(args).toEqual(expect.arrayContaining(['-m', '0', '/d/volume.img', '1024M']))
  })

  it('refuses sizes that are not whole MiB or too small for ext4', () => {
    expect(() => mkfsArgs('/d/disk.img', 1.5)).toThrow(RangeError)
    expect(() => mkfsArgs('/d/disk.img', 8)).toThrow(RangeError)
  })
})
