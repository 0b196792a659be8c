import { describe, expect, it } from 'vitest'
import { parseListeningSockets } from '../../../../src/envd/port-forward/listening-sockets.js'

// Lines captured from this machine's /proc/net/tcp and /proc/net/tcp6 (trailing spaces kept).
const tcp = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     ',
  '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 193347 1 00000000c90f2e9d 100 0 0 10 0                    ',
  '   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1463 1 00000000bd68d6a4 100 0 0 10 0                      ',
  '   2: 020200C0:B8E0 507100CB:0050 06 00000000:00000000 03:00000A44 00000000     0        0 0 3 000000007b4beba2                                      ',
  '   3: 0200E90A:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 193390 1 00000000c90f2e9e 100 0 0 10 0                    ',
  '',
].join('\n')

const tcp6 = [
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 00000000000000000000000000000000:1435 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 193349 1 0000000033079d12 100 0 0 10 0',
  '   1: 0000000000000000FFFF00000100007F:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 193350 1 00000000b96bebb7 100 0 0 10 0',
  '   2: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 193348 1 00000000d6db9628 100 0 0 10 0',
  '   3: 000000FD000000000000000002000000:01BB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 193351 1 00000000d6db9629 100 0 0 10 0',
  '   4: 00000000000000000000000001000000:0BB8 00000000000000000000000001000000:C350 01 00000000:00000000 00:00000000 00000000  1000        0 193352 1 00000000d6db962a 20 4 30 10 -1',
].join('\n')

describe('parseListeningSockets', () => {
  it('decodes little-endian IPv4 addresses and hex ports of LISTEN (0A) sockets only', () => {
    expect(parseListeningSockets(tcp)).toEqual([
      { address: '127.0.0.1', port: 8080 },
      { address: '0.0.0.0', port: 2024 },
      { address: '10.233.0.2', port: 3000 },
    ])
  })

  it('decodes IPv6 words, wildcard, loopback and IPv4-mapped addresses', () => {
    expect(parseListeningSockets(tcp6)).toEqual([
      { address: '::', port: 5173 },
      { address: '127.0.0.1', port: 8081 },
      { address: '::1', port: 3000 },
      { address: 'fd00::2', port: 443 },
    ])
  })

  it('finds nothing in an empty table or unrelated text', () => {
    expect(parseListeningSockets('')).toEqual([])
    expect(parseListeningSockets('not a socket table\n')).toEqual([])
  })
})
