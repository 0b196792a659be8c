import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { checkHostLimits, type HostLimits } from '../../../../src/agent/limits/host-limits.js'
import { SANDBOX_NOFILE } from '../../../../src/agent/runtime/oci-spec.js'

/** This VM's figures (host-facts § the machine). */
const HOST: HostLimits = {
  nrOpen: 1_048_576,
  fileMax: 2_466_160,
  pidMax: 32_768,
  threadsMax: 192_729,
}

function capture() {
  const messages: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      messages.push(JSON.parse(chunk.toString()).msg)
      done()
    },
  })
  return { logger: pino(stream), messages }
}

describe('checkHostLimits', () => {
  it('stops the start when fs.nr_open is below the sandboxes RLIMIT_NOFILE', () => {
    const { logger } = capture()
    expect(() => checkHostLimits({ ...HOST, nrOpen: 1024 }, { pidsLimit: 1024 }, logger)).toThrow(
      `fs.nr_open is 1024, below the sandboxes' RLIMIT_NOFILE ${SANDBOX_NOFILE}: raise it (sysctl -w fs.nr_open=${SANDBOX_NOFILE})`,
    )
  })

  it('reports, without raising, a file table or pids budget too small for maxSandboxes', () => {
    const quiet = capture()
    checkHostLimits(HOST, { maxSandboxes: 20, pidsLimit: 1024 }, quiet.logger)
    expect(quiet.messages).toEqual([])
    const crowded = capture()
    checkHostLimits(HOST, { maxSandboxes: 200, pidsLimit: 1024 }, crowded.logger)
    expect(crowded.messages).toEqual([
      'fs.file-max is smaller than one process per sandbox at its open-file limit',
      'sandboxes together meet the pids budget before each meets its own limit',
    ])
  })
})
