import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { errnoCode } from '../../errno-code.js'

/** One `deb` source of the host's apt configuration, as `sources.list` or deb822 states it. */
export interface AptSource {
  uri: string
  suite: string
  components: string[]
}

const SOURCES_LIST = '/etc/apt/sources.list'
const SOURCES_DIR = '/etc/apt/sources.list.d'

/** Parses one-line style (`deb [options] URI SUITE COMPONENT…`); `deb-src` and comments are skipped. */
export function parseSourcesList(text: string): AptSource[] {
  const sources: AptSource[] = []
  for (const raw of text.split('\n')) {
    const line = raw
      .replace(/#.*/, '')
      .replace(/\[[^\]]*\]/, ' ')
      .trim()
    const [type, uri, suite, ...components] = line.split(/\s+/)
    if (type === 'deb' && uri !== undefined && suite !== undefined) {
      sources.push({ uri, suite, components })
    }
  }
  return sources
}

/** Parses deb822 style (`*.sources`): stanzas of `Types:`, `URIs:`, `Suites:`, `Components:`. */
export function parseDeb822Sources(text: string): AptSource[] {
  const sources: AptSource[] = []
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string[]>()
    for (const line of stanza.split('\n')) {
      const match = /^([A-Za-z-]+):\s*(.*)$/.exec(line.replace(/#.*/, ''))
      if (match?.[1] !== undefined && match[2] !== undefined) {
        fields.set(match[1].toLowerCase(), match[2].trim().split(/\s+/).filter(Boolean))
      }
    }
    if (!(fields.get('types') ?? []).includes('deb')) continue
    if (fields.get('enabled')?.[0] === 'no') continue
    for (const uri of fields.get('uris') ?? []) {
      for (const suite of fields.get('suites') ?? []) {
        sources.push({ uri, suite, components: fields.get('components') ?? [] })
      }
    }
  }
  return sources
}

/**
 * The host's sources for a Debian release: the suite itself and its `-updates` and `-security`
 * pockets, as `deb URI SUITE COMPONENTS` lines mmdebstrap accepts. Only Debian's archive is
 * reachable from our machines (host-facts), so the base template uses exactly the mirrors the
 * host already uses, never a hard-coded host. `main` only: Sandbar's packages are all there.
 */
export function debianSourceLines(sources: readonly AptSource[], suite: string): string[] {
  const pockets = new Set([suite, `${suite}-updates`, `${suite}-security`])
  const lines = sources
    .filter((source) => pockets.has(source.suite) && source.components.includes('main'))
    .map((source) => `deb ${source.uri} ${source.suite} main`)
  return [...new Set(lines)]
}

/** Reads every enabled `deb` source from `/etc/apt/sources.list` and `sources.list.d/`. */
export async function readHostAptSources(): Promise<AptSource[]> {
  const sources = parseSourcesList(await readIfExists(SOURCES_LIST))
  const names = await readdir(SOURCES_DIR).catch(() => [])
  for (const name of names.sort()) {
    const file = path.join(SOURCES_DIR, name)
    if (name.endsWith('.list')) sources.push(...parseSourcesList(await readIfExists(file)))
    if (name.endsWith('.sources')) sources.push(...parseDeb822Sources(await readIfExists(file)))
  }
  return sources
}

async function readIfExists(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT') return ''
    throw error
  })
}
