import { readdir, readFile, readlink } from 'node:fs/promises'

/**
 * How many inotify watches this process holds, from `/proc/self/fdinfo` of its inotify
 * descriptors: the observable proof that a watcher released its `fs.watch` handles.
 */
export async function inotifyWatchCount(): Promise<number> {
  let count = 0
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '')
    if (target !== 'anon_inode:inotify') continue
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '')
    count += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length
  }
  return count
}

/** Polls `probe` until it returns `expected` (watch removal completes asynchronously). */
export async function eventually<T>(probe: () => Promise<T>, expected: T): Promise<T> {
  let value = await probe()
  for (let attempt = 0; attempt < 100 && value !== expected; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    value = await probe()
  }
  return value
}
