/** A TCP socket in the LISTEN state, as the kernel lists it in `/proc/net/tcp{,6}`. */
export interface ListeningSocket {
  /** Local address: dotted IPv4 (also for IPv4-mapped IPv6), or compressed-enough IPv6. */
  address: string
  port: number
}

/** `st` column of `/proc/net/tcp`: `0A` is `TCP_LISTEN`. */
const LISTEN_STATE = '0A'

/** `sl: local_address rem_address st …`, addresses and ports in hex. */
const LINE =
  /^\s*\d+:\s+([0-9A-Fa-f]+):([0-9A-Fa-f]{4})\s+[0-9A-Fa-f]+:[0-9A-Fa-f]{4}\s+([0-9A-Fa-f]{2})\s/

/**
 * The listening sockets in the text of `/proc/net/tcp` or `/proc/net/tcp6`. The kernel prints
 * each 32-bit word of an address in host byte order (little-endian here), so `0100007F` is
 * `127.0.0.1`; ports are plain big-endian hex.
 */
export function parseListeningSockets(text: string): ListeningSocket[] {
  const sockets: ListeningSocket[] = []
  for (const line of text.split('\n')) {
    const match = LINE.exec(line)
    if (match === null) continue
    const [, hexAddress = '', hexPort = '', state = ''] = match
    if (state.toUpperCase() !== LISTEN_STATE) continue
    const address = decodeAddress(hexAddress)
    if (address !== undefined) sockets.push({ address, port: Number.parseInt(hexPort, 16) })
  }
  return sockets
}

function decodeAddress(hex: string): string | undefined {
  if (hex.length === 8) return wordBytes(hex).join('.')
  if (hex.length !== 32) return undefined
  const bytes = [0, 8, 16, 24].flatMap((at) => wordBytes(hex.slice(at, at + 8)))
  // `::ffff:a.b.c.d`: an IPv4 address on a dual-stack socket.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return bytes.slice(12).join('.')
  }
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2)
    groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16))
  return compressIPv6(groups)
}

/** The four bytes of one little-endian 32-bit word, in network order. */
function wordBytes(word: string): number[] {
  return [6, 4, 2, 0].map((at) => Number.parseInt(word.slice(at, at + 2), 16))
}

/** RFC 5952 form: the longest run of two or more zero groups becomes `::`. */
function compressIPv6(groups: string[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let start = 0; start < groups.length; start++) {
    let length = 0
    while (groups[start + length] === '0') length++
    if (length > bestLength) {
      bestStart = start
      bestLength = length
    }
  }
  if (bestStart < 0) return groups.join(':')
  const head = groups.slice(0, bestStart).join(':')
  const tail = groups.slice(bestStart + bestLength).join(':')
  return `${head}::${tail}`
}
