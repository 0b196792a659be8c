import { readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'

/** CRIU's images of memory pages (`pages-<n>.img`), most of a checkpoint's bytes. */
export const PAGES_IMAGE = /^pages-\d+\.img$/

const COMPRESSED = '.zst'

/**
 * A compressed page image kept only when it is at most this share of the image: decompressing
 * costs a resume about a millisecond per MiB, worth it for memory that compresses, not for
 * memory that does not (random or already compressed data).
 */
const WORTH_KEEPING = 0.9

/**
 * Compresses a hibernated sandbox's memory pages in place (zstd at its fastest level, on every
 * core): a process's memory is mostly zeros, code and repeated data, and a hibernated sandbox
 * may lie on disk for days. The page images go only once their compressed copies are on disk,
 * so a crash or power cut at any point leaves a checkpoint decompressPages reads.
 */
export async function compressPages(dir: string): Promise<void> {
  const pages = (await readdir(dir))
    .filter((name) => PAGES_IMAGE.test(name))
    .map((name) => path.join(dir, name))
  if (pages.length === 0) return
  await runHostCommand('zstd', ['-q', '-1', '-T0', ...pages])
  await runHostCommand('sync', ['--file-system', dir])
  await Promise.all(
    pages.map(async (file) => {
      const [raw, compressed] = await Promise.all([stat(file), stat(`${file}${COMPRESSED}`)])
      await rm(compressed.size <= raw.size * WORTH_KEEPING ? file : `${file}${COMPRESSED}`)
    }),
  )
}

/**
 * Gives CRIU back the page images compressPages replaced, with the owner and mode they had. A
 * compressed copy beside a page image that is still there is what a crash during compression
 * left: the image is whole, the copy is not.
 */
export async function decompressPages(dir: string): Promise<void> {
  const names = new Set(await readdir(dir))
  const compressed: string[] = []
  for (const name of names) {
    if (!name.endsWith(COMPRESSED) || !PAGES_IMAGE.test(name.slice(0, -COMPRESSED.length))) {
      continue
    }
    if (names.has(name.slice(0, -COMPRESSED.length))) await rm(path.join(dir, name))
    else compressed.push(path.join(dir, name))
  }
  if (compressed.length === 0) return
  await runHostCommand('zstd', ['-q', '-d', '--rm', ...compressed])
}
