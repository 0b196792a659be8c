import { readFile } from 'node:fs/promises'
import { parseIPv4CIDR } from './ipv4.js'

/**
 * The IPv4 name servers of the host's `/etc/resolv.conf`, which build sandboxes get (bound in
 * read-only) so template steps resolve package registries. A loopback resolver (a local stub
 * such as systemd-resolved's 127.0.0.53) is left out: from a sandbox's network it is the
 * sandbox's own loopback.
 */
export async function hostResolvers(file = '/etc/resolv.conf'): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return parseResolvers(text)
}

/** The `nameserver` addresses of a resolv.conf text that are IPv4 and not loopback. Pure. */
export function parseResolvers(text: string): string[] {
  const servers: string[] = []
  for (const line of text.split('\n')) {
    const [keyword, address] = line.trim().split(/\s+/)
    if (keyword !== 'nameserver' || address === undefined) continue
    const cidr = parseIPv4CIDR(address)
    if (cidr === undefined || address.startsWith('127.')) continue
    servers.push(address)
  }
  return servers
}
