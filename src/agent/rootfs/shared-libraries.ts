import { runHostCommand } from '../host-command.js'

/** One line of `ldd` output: the name the loader looks up and the host file it resolved to. */
export interface SharedLibrary {
  /** Soname (`libc.so.6`), or the loader's file name (`ld-linux-x86-64.so.2`). */
  name: string
  /** Absolute host path; null when ldd printed `=> not found`. */
  path: string | null
}

/**
 * Parses glibc `ldd` output. `linux-vdso.so.1` has no file (the kernel maps it) and is left out;
 * the loader appears as a bare path (`/lib64/ld-linux-x86-64.so.2 (0x…)`) and is named by its
 * file name, which is what the toolbox copies it as.
 */
export function parseLdd(output: string): SharedLibrary[] {
  const libraries: SharedLibrary[] = []
  for (const raw of output.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.endsWith(':')) continue
    const arrow = /^(\S+) => (?:(\/\S+) \(0x[0-9a-f]+\)|not found)$/.exec(line)
    if (arrow?.[1] !== undefined) {
      libraries.push({ name: arrow[1], path: arrow[2] ?? null })
      continue
    }
    const bare = /^(\S+) \(0x[0-9a-f]+\)$/.exec(line)
    if (bare?.[1]?.startsWith('/')) {
      libraries.push({ name: bare[1].slice(bare[1].lastIndexOf('/') + 1), path: bare[1] })
    }
  }
  return libraries
}

/** The shared libraries `file` needs, resolved on the host; fails if any is missing. */
export async function sharedLibraries(file: string): Promise<SharedLibrary[]> {
  const libraries = parseLdd(await runHostCommand('ldd', [file]))
  const missing = libraries.filter((library) => library.path === null).map((l) => l.name)
  if (missing.length > 0) {
    throw new Error(`${file} needs shared libraries the host lacks: ${missing.join(', ')}`)
  }
  return libraries
}
