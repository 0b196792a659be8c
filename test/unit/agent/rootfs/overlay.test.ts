import { describe, expect, it } from 'vitest'
import { overlayOptions } from '../../../../src/agent/rootfs/overlay.js'

describe('overlayOptions', () => {
  it('lists lowerdir top-first although layers come lowest first', () => {
    const options = overlayOptions({
      lower: ['/l/base', '/l/step1', '/l/step2'],
      upper: '/s/upper',
      work: '/s/work',
    })
    expect(options).toBe('lowerdir=/l/step2:/l/step1:/l/base,upperdir=/s/upper,workdir=/s/work')
  })

  it('refuses paths that would break the option string', () => {
    const base = { upper: '/s/upper', work: '/s/work' }
    expect(() => overlayOptions({ ...base, lower: ['/l/a:b'] })).toThrow('without , :')
    expect(() => overlayOptions({ ...base, lower: ['/l/a,upperdir=/'] })).toThrow('without , :')
    expect(() => overlayOptions({ ...base, lower: ['relative'] })).toThrow('must be absolute')
  })

  it('needs a lower layer', () => {
    expect(() => overlayOptions({ lower: [], upper: '/u', work: '/w' })).toThrow('at least one')
  })
})
