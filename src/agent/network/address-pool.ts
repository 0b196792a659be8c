import { formatIPv4, type IPv4CIDR, parseIPv4CIDR, sizeOf } from './ipv4.js'

/** The addresses of one slot: a /30 whose `.1` is the host end and `.2` the sandbox. */
export interface SlotAddresses {
  /** The /30, e.g. `10.231.0.4/30`. */
  network: string
  hostAddress: string
  sandboxAddress: string
  prefixLength: 30
}

/** Slot-numbered /30 networks carved from one IPv4 pool such as `10.231.0.0/16`. */
export interface AddressPool {
  /** The pool itself, normalised (host bits cleared). */
  cidr: string
  /** How many slots fit: a /16 holds 16384. */
  capacity: number
  addresses(slot: number): SlotAddresses
}

const SLOT_SIZE = 4

export function createAddressPool(pool: string): AddressPool {
  const cidr = parseIPv4CIDR(pool)
  if (cidr === undefined || cidr.prefixLength > 30) {
    throw new RangeError(`invalid address pool ${pool}: expected an IPv4 CIDR of /30 or wider`)
  }
  const capacity = sizeOf(cidr) / SLOT_SIZE
  return {
    cidr: `${formatIPv4(cidr.address)}/${cidr.prefixLength}`,
    capacity,
    addresses: (slot) => slotAddresses(cidr, capacity, slot),
  }
}

function slotAddresses(pool: IPv4CIDR, capacity: number, slot: number): SlotAddresses {
  if (!Number.isInteger(slot) || slot < 0 || slot >= capacity) {
    throw new RangeError(`slot ${slot} is outside the address pool (capacity ${capacity})`)
  }
  const base = pool.address + slot * SLOT_SIZE
  return {
    network: `${formatIPv4(base)}/30`,
    hostAddress: formatIPv4(base + 1),
    sandboxAddress: formatIPv4(base + 2),
    prefixLength: 30,
  }
}
