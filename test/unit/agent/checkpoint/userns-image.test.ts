import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import { describe, expect, it } from 'vitest'
import { remapUsernsImage } from '../../../../src/agent/checkpoint/userns-image.js'

type Extent = [first: number, lowerFirst: number, count: number]

/** A CRIU userns image as CRIU writes one: magics, then one size-prefixed userns_entry. */
function image(uidMap: Extent[], gidMap: Extent[]): Uint8Array {
  const writer = new BinaryWriter()
  for (const [field, extents] of [
    [1, uidMap],
    [2, gidMap],
  ] as const) {
    for (const [first, lowerFirst, count] of extents) {
      writer.tag(field, WireType.LengthDelimited).fork()
      writer.tag(1, WireType.Varint).uint32(first)
      writer.tag(2, WireType.Varint).uint32(lowerFirst)
      writer.tag(3, WireType.Varint).uint32(count)
      writer.join()
    }
  }
  const entry = writer.finish()
  const head = Buffer.alloc(12)
  head.writeUInt32LE(0x54564319, 0)
  head.writeUInt32LE(0x55474906, 4)
  head.writeUInt32LE(entry.byteLength, 8)
  return Buffer.concat([head, entry])
}

/** The extents of an image, read back independently of the code under test. */
function extents(bytes: Uint8Array): { uid: Extent[]; gid: Extent[] } {
  const reader = new BinaryReader(bytes.subarray(12))
  const result = { uid: [] as Extent[], gid: [] as Extent[] }
  while (reader.pos < reader.len) {
    const [field] = reader.tag()
    const inner = new BinaryReader(reader.bytes())
    const values: number[] = []
    while (inner.pos < inner.len) {
      inner.tag()
      values.push(inner.uint32())
    }
    ;(field === 1 ? result.uid : result.gid).push(values as Extent)
  }
  return result
}

const source = { hostID: 1_000_000, size: 65_536 }
const target = { hostID: 2_000_000, size: 65_536 }

describe('remapUsernsImage', () => {
  it("moves every extent from the source's host IDs to the same place in the target's", () => {
    const dumped = image(
      [
        [0, 1_000_000, 1000],
        [1000, 1_001_000, 64_536],
      ],
      [[0, 1_000_000, 65_536]],
    )
    expect(extents(remapUsernsImage(dumped, source, target))).toEqual({
      uid: [
        [0, 2_000_000, 1000],
        [1000, 2_001_000, 64_536],
      ],
      gid: [[0, 2_000_000, 65_536]],
    })
  })

  it("refuses an extent outside the source's host IDs and a file that is not one", () => {
    const hostRoot = image([[0, 0, 1]], [])
    expect(() => remapUsernsImage(hostRoot, source, target)).toThrow(/outside host IDs/)
    expect(() => remapUsernsImage(Buffer.from('not an image'), source, target)).toThrow(
      /not a CRIU user namespace image/,
    )
  })
})
