import { describe, expect, it } from 'vitest'
import { ID_MAP_SIZE, modeToRestore, shiftedID } from '../../../../src/agent/rootfs/id-shift.js'

const file = (mode: number, symlink = false) => ({ mode, isSymbolicLink: () => symlink })

describe('shiftedID', () => {
  it('adds the shift to IDs inside the map', () => {
    expect(shiftedID(0, 100_000)).toBe(100_000)
    expect(shiftedID(1000, 100_000)).toBe(101_000)
    expect(shiftedID(65_534, 100_000)).toBe(165_534)
  })

  it('refuses IDs the 65536-wide map cannot hold', () => {
    expect(() => shiftedID(ID_MAP_SIZE, 100_000)).toThrow(RangeError)
    expect(() => shiftedID(-1, 100_000)).toThrow(RangeError)
    expect(() => shiftedID(1.5, 100_000)).toThrow(RangeError)
  })
})

describe('modeToRestore', () => {
  it('gives back setuid and setgid files their full permission bits', () => {
    expect(modeToRestore(file(0o104755))).toBe(0o4755) // sudo
    expect(modeToRestore(file(0o102755))).toBe(0o2755) // chage, expiry
    expect(modeToRestore(file(0o106711))).toBe(0o6711)
  })

  it('keeps the sticky bit alongside setuid', () => {
    expect(modeToRestore(file(0o107755))).toBe(0o7755)
  })

  it('needs nothing for plain files, sticky-only dirs and symlinks', () => {
    expect(modeToRestore(file(0o100644))).toBeUndefined()
    expect(modeToRestore(file(0o41777))).toBeUndefined()
    expect(modeToRestore(file(0o120777, true))).toBeUndefined()
  })
})
