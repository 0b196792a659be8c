import { StepError } from './step-error.js'

/** Looks a variable up; undefined means unset, which expands to the empty string as in sh. */
export type VariableLookup = (name: string) => string | undefined

const NAME_START = /[A-Za-z_]/
const NAME_PART = /[A-Za-z0-9_]/

/**
 * Expands a value the way a shell expands a double-quoted word, minus anything that runs code
 * (§2.2 ENV: "`$VAR` expansion allowed, command substitution escaped"): `$NAME`, `${NAME}`,
 * `${NAME:-word}` and `${NAME-word}` expand; `\$`, `` \` ``, `\"` and `\\` drop their backslash;
 * `$(…)`, `$((…))` and backticks stay as written, as do `$` before anything that is not a name.
 */
export function expandShellValue(value: string, lookup: VariableLookup): string {
  let out = ''
  let i = 0
  while (i < value.length) {
    const char = value.charAt(i)
    if (char === '\\' && i + 1 < value.length && '$`"\\'.includes(value.charAt(i + 1))) {
      out += value.charAt(i + 1)
      i += 2
    } else if (char === '$' && value.charAt(i + 1) === '{') {
      const end = value.indexOf('}', i + 2)
      if (end < 0) throw new StepError(`bad substitution: unterminated \${ in '${value}'`)
      out += expandBraced(value.slice(i + 2, end), value, lookup)
      i = end + 1
    } else if (char === '$' && NAME_START.test(value.charAt(i + 1))) {
      let end = i + 2
      while (end < value.length && NAME_PART.test(value.charAt(end))) end++
      out += lookup(value.slice(i + 1, end)) ?? ''
      i = end
    } else {
      out += char
      i++
    }
  }
  return out
}

function expandBraced(inner: string, value: string, lookup: VariableLookup): string {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*))?$/s.exec(inner)
  if (!match?.[1]) throw new StepError(`bad substitution: \${${inner}} in '${value}'`)
  const current = lookup(match[1])
  const operator = match[2]
  const useDefault =
    (operator === ':-' && (current === undefined || current === '')) ||
    (operator === '-' && current === undefined)
  if (useDefault) return expandShellValue(match[3] ?? '', lookup)
  return current ?? ''
}
