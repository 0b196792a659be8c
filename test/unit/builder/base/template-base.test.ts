import { describe, expect, it } from 'vitest'
import { withoutMetadataLayer } from '../../../../src/builder/base/base-phase.js'

describe('a template as a base', () => {
  it("leaves out the base's /.e2b layer, which names its build, so steps above stay cached", () => {
    expect(withoutMetadataLayer(['base-1', 's-2', 'f-3', 'e-4'])).toEqual(['base-1', 's-2', 'f-3'])
  })

  it('keeps a stack without one whole', () => {
    expect(withoutMetadataLayer(['base-1', 's-2', 'f-3'])).toEqual(['base-1', 's-2', 'f-3'])
    expect(withoutMetadataLayer(['q-1'])).toEqual(['q-1'])
    expect(withoutMetadataLayer([])).toEqual([])
  })
})
