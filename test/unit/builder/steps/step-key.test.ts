import { describe, expect, it } from 'vitest'
import type { BuildStep } from '../../../../src/builder/index.js'
import { type BuildContext, finalizeKey, stepKey } from '../../../../src/builder/steps/index.js'

const context: BuildContext = { user: 'user', workdir: '/app', env: { A: '1', B: '2' } }
const step: BuildStep = {
  type: 'COPY',
  args: ['a', 'b', '', ''],
  filesHash: 'f'.repeat(64),
  force: false,
}

describe('stepKey', () => {
  it('is a stable sha256 hex of the same inputs, whatever the env order or force', () => {
    const key = stepKey('parent', step, context)
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    expect(
      stepKey('parent', { ...step, force: true }, { ...context, env: { B: '2', A: '1' } }),
    ).toBe(key)
    expect(stepKey('parent', { ...step, type: 'add' }, context)).toBe(key)
  })

  it('changes with the parent, the step and each part of the context', () => {
    const key = stepKey('parent', step, context)
    const variants = [
      stepKey('other', step, context),
      stepKey('parent', { ...step, args: ['a', 'c', '', ''] }, context),
      stepKey('parent', { ...step, filesHash: 'e'.repeat(64) }, context),
      stepKey('parent', { ...step, type: 'RUN' }, context),
      stepKey('parent', step, { ...context, user: 'root' }),
      stepKey('parent', step, { ...context, workdir: undefined }),
      stepKey('parent', step, { ...context, env: { A: '1', B: '3' } }),
    ]
    expect(new Set([key, ...variants]).size).toBe(variants.length + 1)
  })

  it('keys finalize by its parent', () => {
    expect(finalizeKey('a')).toBe(finalizeKey('a'))
    expect(finalizeKey('a')).not.toBe(finalizeKey('b'))
  })
})
