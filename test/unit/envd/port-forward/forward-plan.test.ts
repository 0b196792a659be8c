import { describe, expect, it } from 'vitest'
import {
  anyLoopbackService,
  forwardKey,
  planForwards,
} from '../../../../src/envd/port-forward/forward-plan.js'

const external = ['10.233.0.2']
const plan = (sockets: { address: string; port: number }[], open: string[] = []) =>
  planForwards({
    sockets,
    externalAddresses: external,
    reservedPorts: new Set([49983]),
    open: new Set(open),
  })

describe('planForwards', () => {
  it('forwards a port listening only on 127.0.0.1 to every external address', () => {
    expect(
      planForwards({
        sockets: [{ address: '127.0.0.1', port: 8080 }],
        externalAddresses: ['10.233.0.2', '192.0.2.7'],
        reservedPorts: new Set(),
        open: new Set(),
      }),
    ).toEqual([
      { address: '10.233.0.2', port: 8080, target: '127.0.0.1' },
      { address: '192.0.2.7', port: 8080, target: '127.0.0.1' },
    ])
  })

  it('relays to ::1 when the service listens on IPv6 loopback only', () => {
    expect(plan([{ address: '::1', port: 3000 }])).toEqual([
      { address: '10.233.0.2', port: 3000, target: '::1' },
    ])
  })

  it('leaves wildcard-bound ports, envd’s own port and non-loopback services alone', () => {
    expect(
      plan([
        { address: '127.0.0.1', port: 5000 },
        { address: '0.0.0.0', port: 5000 },
        { address: '::', port: 5173 },
        { address: '127.0.0.1', port: 5173 },
        { address: '127.0.0.1', port: 49983 },
        { address: '10.233.0.2', port: 8000 },
      ]),
    ).toEqual([])
  })

  it('skips an external endpoint another listener holds, but keeps its own forward', () => {
    const sockets = [
      { address: '127.0.0.1', port: 8080 },
      { address: '10.233.0.2', port: 8080 },
    ]
    expect(plan(sockets)).toEqual([])
    const key = forwardKey({ address: '10.233.0.2', port: 8080 })
    expect(plan(sockets, [key])).toEqual([
      { address: '10.233.0.2', port: 8080, target: '127.0.0.1' },
    ])
  })
})

describe('anyLoopbackService', () => {
  const reserved = new Set([49983])

  it('is true only for a loopback listener on a port that is not reserved', () => {
    expect(anyLoopbackService([{ address: '127.0.0.1', port: 8080 }], reserved)).toBe(true)
    expect(anyLoopbackService([{ address: '::1', port: 3000 }], reserved)).toBe(true)
    expect(anyLoopbackService([{ address: '127.0.0.1', port: 49983 }], reserved)).toBe(false)
    expect(
      anyLoopbackService(
        [
          { address: '0.0.0.0', port: 8080 },
          { address: '10.233.0.2', port: 3000 },
        ],
        reserved,
      ),
    ).toBe(false)
    expect(anyLoopbackService([], reserved)).toBe(false)
  })

  it('is false whenever the plan is empty whatever the addresses, so a scan may skip reading them', () => {
    const sockets = [
      { address: '::', port: 5173 },
      { address: '127.0.0.1', port: 49983 },
    ]
    expect(anyLoopbackService(sockets, reserved)).toBe(false)
    expect(
      planForwards({
        sockets,
        externalAddresses: external,
        reservedPorts: reserved,
        open: new Set(),
      }),
    ).toEqual([])
  })
})
