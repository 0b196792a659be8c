import { describe, expect, it } from 'vitest'
import {
  e2bMetadata,
  formatPhaseLine,
  formatStepLine,
} from '../../../../src/builder/steps/index.js'

describe('build log lines', () => {
  it('reads like §2.4: [builder i/N] TYPE ARGS... [hash]', () => {
    expect(formatStepLine(1, 3, { type: 'run', args: ['pip install x'] }, 'abc', false)).toBe(
      '[builder 1/3] RUN pip install x [abc]',
    )
  })

  it('leaves out empty args and prefixes cache hits with CACHED', () => {
    expect(formatStepLine(2, 3, { type: 'COPY', args: ['a', '/b', '', ''] }, 'h', true)).toBe(
      'CACHED [builder 2/3] COPY a /b [h]',
    )
    expect(formatPhaseLine('base', 'FROM e2bdev/base', 'h', false)).toBe(
      '[base] FROM e2bdev/base [h]',
    )
  })
})

describe('e2bMetadata', () => {
  it('writes the build identity §2.4 names, one KEY=value line each', () => {
    expect(e2bMetadata({ templateID: 'tpl', buildID: 'b-1' })).toBe(
      'ENV_ID=tpl\nTEMPLATE_ID=tpl\nBUILD_ID=b-1\n',
    )
  })
})
