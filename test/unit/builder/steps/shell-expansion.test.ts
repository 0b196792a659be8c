// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are shell text, whose ${NAME} is the subject under test
import { describe, expect, it } from 'vitest'
import { applyEnv, contextLookup } from '../../../../src/builder/steps/env-step.js'
import type { BuildContext } from '../../../../src/builder/steps/index.js'
import { expandShellValue } from '../../../../src/builder/steps/shell-expansion.js'

const context: BuildContext = { user: 'user', workdir: undefined, env: { A: 'alpha', EMPTY: '' } }
const expand = (value: string) => expandShellValue(value, contextLookup(context))

describe('expandShellValue', () => {
  it('expands $NAME and ${NAME} from the context env, unset ones to nothing', () => {
    expect(expand('$A-${A}x$A_b')).toBe('alpha-alphax')
    expect(expand('[$UNSET]')).toBe('[]')
  })

  it('supports ${NAME:-word} and ${NAME-word} as sh does', () => {
    expect(expand('${EMPTY:-d}|${EMPTY-d}|${UNSET-$A}|${A:-d}')).toBe('d||alpha|alpha')
  })

  it('never runs command substitution, and keeps it as written', () => {
    expect(expand('$(rm -rf /) `id` $((1+1))')).toBe('$(rm -rf /) `id` $((1+1))')
  })

  it('drops the backslash of escaped $, backtick, quote and backslash only', () => {
    expect(expand('\\$A \\` \\" \\\\ \\n')).toBe('$A ` " \\ \\n')
  })

  it('keeps a $ that starts no name', () => {
    expect(expand('cost: 5$ $1 $$ $')).toBe('cost: 5$ $1 $$ $')
  })

  it('falls back to the PATH and HOME envd gives a process when the env has none', () => {
    expect(expand('/opt/bin:$PATH')).toBe(
      '/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    )
    expect(expand('$HOME/.local')).toBe('/home/user/.local')
    expect(expandShellValue('$HOME', contextLookup({ ...context, user: 'root' }))).toBe('/root')
    expect(expandShellValue('$PATH', contextLookup({ ...context, env: { PATH: '/x' } }))).toBe('/x')
  })

  it('refuses a bad substitution', () => {
    expect(() => expand('${A')).toThrow("bad substitution: unterminated ${ in '${A'")
    expect(() => expand('${A B}')).toThrow("bad substitution: ${A B} in '${A B}'")
  })
})

describe('applyEnv', () => {
  it('merges expanded pairs, each seeing the env before the step as Docker does', () => {
    const after = applyEnv('ENV', ['A', 'new', 'B', '$A', 'C', '$(date)'], context)
    expect(after.env).toEqual({ A: 'new', EMPTY: '', B: 'alpha', C: '$(date)' })
    expect(context.env.A).toBe('alpha')
  })

  it('refuses no args, an odd count and a key that is not a name, with the step type', () => {
    expect(() => applyEnv('ENV', [], context)).toThrow('ENV does not support passing no arguments')
    expect(() => applyEnv('ARG', ['A'], context)).toThrow(
      'ARG requires both a key and value arguments',
    )
    expect(() => applyEnv('ENV', ['A=B', 'x'], context)).toThrow(
      "ENV key 'A=B' is not a variable name",
    )
  })
})
