import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import type { IDMap } from '../user-namespace.js'

/** CRIU's magic at the head of every image but the inventory, then the image's own magic. */
const IMG_COMMON_MAGIC = 0x54564319
const USERNS_MAGIC = 0x55474906
const HEADER_BYTES = 8

interface Extent {
  first: number
  lowerFirst: number
  count: number
}

/**
 * Points the user namespaces in a checkpoint's images at another sandbox's host IDs. CRIU
 * makes each restored user namespace with the uid_map and gid_map it dumped: a snapshot
 * restored into a new sandbox would otherwise run as the source's host IDs, sharing their
 * files and limits. Each extent must lie inside `from`; it moves to the same place in `to`.
 */
export async function remapUsernsImages(imagesDir: string, from: IDMap, to: IDMap): Promise<void> {
  const names = (await readdir(imagesDir)).filter((name) => /^userns-\d+\.img$/.test(name))
  if (names.length === 0) throw new Error(`no user namespace image in ${imagesDir}`)
  for (const name of names) {
    const file = path.join(imagesDir, name)
    await writeFile(file, remapUsernsImage(await readFile(file), from, to))
  }
}

/** The same image with every extent's host side moved from `from` to `to` (pure). */
export function remapUsernsImage(image: Uint8Array, from: IDMap, to: IDMap): Uint8Array {
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength)
  if (
    image.byteLength < HEADER_BYTES ||
    view.getUint32(0, true) !== IMG_COMMON_MAGIC ||
    view.getUint32(4, true) !== USERNS_MAGIC
  ) {
    throw new Error('not a CRIU user namespace image')
  }
  const chunks: Uint8Array[] = [image.subarray(0, HEADER_BYTES)]
  let offset = HEADER_BYTES
  while (offset < image.byteLength) {
    const size = view.getUint32(offset, true)
    const entry = image.subarray(offset + 4, offset + 4 + size)
    if (entry.byteLength !== size) throw new Error('truncated CRIU user namespace image')
    const remapped = encodeEntry(decodeEntry(entry), (extent) => moveExtent(extent, from, to))
    const length = new Uint8Array(4)
    new DataView(length.buffer).setUint32(0, remapped.byteLength, true)
    chunks.push(length, remapped)
    offset += 4 + size
  }
  return Buffer.concat(chunks)
}

function moveExtent(extent: Extent, from: IDMap, to: IDMap): Extent {
  const start = extent.lowerFirst - from.hostID
  if (start < 0 || start + extent.count > from.size || start + extent.count > to.size) {
    throw new Error(
      `user namespace extent ${extent.lowerFirst}+${extent.count} is outside host IDs ${from.hostID}+${from.size}`,
    )
  }
  return { ...extent, lowerFirst: to.hostID + start }
}

/** userns_entry: repeated uid_gid_extent uid_map = 1, gid_map = 2 (CRIU's images/userns.proto). */
function decodeEntry(bytes: Uint8Array): { uidMap: Extent[]; gidMap: Extent[] } {
  const reader = new BinaryReader(bytes)
  const entry = { uidMap: [] as Extent[], gidMap: [] as Extent[] }
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag()
    if (field === 1) entry.uidMap.push(decodeExtent(reader.bytes()))
    else if (field === 2) entry.gidMap.push(decodeExtent(reader.bytes()))
    else reader.skip(wireType)
  }
  return entry
}

/** uid_gid_extent: first = 1, lower_first = 2, count = 3, each a required uint32. */
function decodeExtent(bytes: Uint8Array): Extent {
  const reader = new BinaryReader(bytes)
  const extent = { first: -1, lowerFirst: -1, count: -1 }
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag()
    if (field === 1) extent.first = reader.uint32()
    else if (field === 2) extent.lowerFirst = reader.uint32()
    else if (field === 3) extent.count = reader.uint32()
    else reader.skip(wireType)
  }
  if (extent.first < 0 || extent.lowerFirst < 0 || extent.count < 0) {
    throw new Error('CRIU user namespace extent lacks a required field')
  }
  return extent
}

function encodeEntry(
  entry: { uidMap: Extent[]; gidMap: Extent[] },
  move: (extent: Extent) => Extent,
): Uint8Array {
  const writer = new BinaryWriter()
  for (const [field, extents] of [
    [1, entry.uidMap],
    [2, entry.gidMap],
  ] as const) {
    for (const extent of extents) {
      const moved = move(extent)
      writer
        .tag(field, WireType.LengthDelimited)
        .fork()
        .tag(1, WireType.Varint)
        .uint32(moved.first)
        .tag(2, WireType.Varint)
        .uint32(moved.lowerFirst)
        .tag(3, WireType.Varint)
        .uint32(moved.count)
        .join()
    }
  }
  return writer.finish()
}
