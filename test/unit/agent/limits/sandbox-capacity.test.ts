import { describe, expect, it } from 'vitest'
import {
  chooseMaxSandboxes,
  type HostResources,
  sandboxCapacity,
} from '../../../../src/agent/limits/sandbox-capacity.js'

/** This VM (host-facts § the machine): 24 GiB, pid_max 32768, a /16 pool. */
const VM: HostResources = {
  limits: { nrOpen: 1_048_576, fileMax: 2_466_160, pidMax: 32_768, threadsMax: 192_729 },
  memoryMB: 24_105,
  addressPool: { cidr: '10.231.0.0/16', slots: 16_384 },
}
/** A typical systemd host: pid_max 4194304 and fs.file-max LONG_MAX (systemd's defaults), 8 GiB. */
const SERVER: HostResources = {
  limits: {
    nrOpen: 1_048_576,
    fileMax: Number('9223372036854775807'),
    pidMax: 4_194_304,
    threadsMax: 127_000,
  },
  memoryMB: 8192,
  addressPool: { cidr: '10.231.0.0/16', slots: 16_384 },
}
const BASE = { memoryMB: 512, pidsLimit: 1024 }

describe('sandboxCapacity', () => {
  it('counts what each resource holds with every sandbox at its limits', () => {
    // memory: 24105 MiB less a tenth (2411) = 21694 / 512; pids: 32768 - 4096 = 28672 / 1024;
    // files: 2466160 / 16384.
    expect(sandboxCapacity(VM, BASE)).toEqual({
      memory: 42,
      pids: 28,
      openFiles: 150,
      addressPool: 16_384,
    })
    // threads-max bounds the pids budget below pid_max: 127000 - 12700 = 114300 / 1024;
    // memory: 8192 less 1 GiB (more than a tenth) = 7168 / 512.
    expect(sandboxCapacity(SERVER, BASE)).toMatchObject({ memory: 14, pids: 111 })
  })

  it('scales with the sandbox share', () => {
    expect(sandboxCapacity(SERVER, { memoryMB: 1024, pidsLimit: 4096 })).toMatchObject({
      memory: 7,
      pids: 27,
    })
  })
})

describe('chooseMaxSandboxes', () => {
  it('defaults to the tightest resource and says which, then the others', () => {
    expect(chooseMaxSandboxes(undefined, VM, BASE)).toEqual({
      maxSandboxes: 28,
      summary:
        'Up to 28 sandboxes at once, the most this host holds with every sandbox at its limits: 28 by pids (1024 each of a budget of 28672), 42 by memory (512 MiB each of 21.2 GiB, 2.4 GiB kept for the host), 150 by open files (16384 each of fs.file-max 2466160), 16384 by the address pool (one /30 each of 10.231.0.0/16). Set another limit with --max-sandboxes N.',
    })
    const server = chooseMaxSandboxes(undefined, SERVER, BASE)
    expect(server.maxSandboxes).toBe(14)
    expect(server.summary).toMatch(
      /^Up to 14 sandboxes at once, [^:]+: 14 by memory \(512 MiB each of 7\.0 GiB, 1\.0 GiB kept for the host\), 111 by pids/,
    )
  })

  it('is bound by a narrow address pool', () => {
    const narrow = { ...SERVER, addressPool: { cidr: '10.231.0.0/28', slots: 4 } }
    expect(chooseMaxSandboxes(undefined, narrow, BASE).maxSandboxes).toBe(4)
  })

  it('still runs one sandbox on a host too small for any at its limits', () => {
    const small = { ...SERVER, memoryMB: 1024 }
    expect(sandboxCapacity(small, BASE).memory).toBe(0)
    expect(chooseMaxSandboxes(undefined, small, BASE).maxSandboxes).toBe(1)
  })

  it('keeps --max-sandboxes, and says what the host would hold', () => {
    expect(chooseMaxSandboxes(2, VM, BASE)).toEqual({
      maxSandboxes: 2,
      summary: expect.stringMatching(
        /^Up to 2 sandboxes at once, as --max-sandboxes says; with every sandbox at its limits this host holds 28: 28 by pids/,
      ),
    })
    expect(chooseMaxSandboxes(500, VM, BASE).maxSandboxes).toBe(500)
  })
})
