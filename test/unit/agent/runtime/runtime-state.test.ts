import { describe, expect, it } from 'vitest'
import { AgentError } from '../../../../src/agent/errors.js'
import {
  isUnknownContainer,
  parseListOutput,
  parseStateOutput,
} from '../../../../src/agent/runtime/runtime-state.js'

const crunState = JSON.stringify({
  ociVersion: '1.0.0',
  id: 'c1',
  pid: 4242,
  status: 'running',
  bundle: '/b/c1',
  rootfs: '/r/c1',
  created: '2026-11-21T13:00:00.000000Z',
  owner: '',
})

function failure(stderr: string): AgentError {
  return new AgentError('crun failed', ['crun'], 1, stderr)
}

describe('runtime state output', () => {
  it('parses `state` JSON', () => {
    expect(parseStateOutput(crunState)).toEqual({
      id: 'c1',
      status: 'running',
      pid: 4242,
      bundle: '/b/c1',
    })
  })

  it('reports no PID for a stopped container', () => {
    const stopped = JSON.stringify({ ...JSON.parse(crunState), status: 'stopped' })
    expect(parseStateOutput(stopped).pid).toBe(0)
  })

  it('rejects an unknown status', () => {
    const odd = JSON.stringify({ ...JSON.parse(crunState), status: 'sleeping' })
    expect(() => parseStateOutput(odd)).toThrow()
  })

  it("parses `list` JSON, runc's null and crun's empty array", () => {
    expect(parseListOutput(`[${crunState}]`)).toHaveLength(1)
    expect(parseListOutput('null\n')).toEqual([])
    expect(parseListOutput('[\n\n]\n')).toEqual([])
  })

  it('recognises "no such container" from crun, runc and runsc', () => {
    expect(
      isUnknownContainer(failure('error opening file `/s/x/status`: No such file or directory')),
    ).toBe(true)
    expect(isUnknownContainer(failure('container does not exist'))).toBe(true)
    expect(isUnknownContainer(failure('permission denied'))).toBe(false)
    expect(isUnknownContainer(new Error('container does not exist'))).toBe(false)
  })
})
