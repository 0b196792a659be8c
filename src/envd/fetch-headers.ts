/**
 * The Fetch API's `Headers` (https://fetch.spec.whatwg.org/#headers-class) as envd needs it:
 * Connect's handlers build one for every request and response. Node's global `Headers` is
 * undici's, and its first use evaluates all of undici (its fetch, its HTTP/1 and HTTP/2
 * clients): 20–40 ms on a 2-core host, which every sandbox's first command waited for, and
 * about 1 MiB that every idle envd kept. envd serves requests and makes none, so it installs
 * this class in its place (useLightFetchHeaders). headers-polyfill would do, but sorts names
 * with localeCompare, whose first call loads ICU's collation: 6–9 ms, and the spec's order
 * is by code unit. test/unit/envd/fetch-headers.test.ts holds it to undici's behaviour.
 */
export class FetchHeaders implements Headers {
  /** Lower-cased name → its values in order; `get` joins them, `set-cookie` lists each. */
  readonly #values = new Map<string, string[]>()

  constructor(init?: HeadersInit) {
    if (init === undefined || init === null) return
    if (typeof init !== 'object') throw new TypeError('Headers init must be an object')
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<Iterable<string>>) {
        if (typeof pair !== 'object' || pair === null) {
          throw new TypeError('Headers init pairs must be [name, value]')
        }
        const [name, value, ...rest] = Array.from(pair, String)
        if (name === undefined || value === undefined || rest.length > 0) {
          throw new TypeError('Headers init pairs must be [name, value]')
        }
        this.append(name, value)
      }
    } else {
      for (const [name, value] of Object.entries(init)) this.append(name, String(value))
    }
  }

  append(name: string, value: string): void {
    const key = checkedName(name)
    const normalized = normalizedValue(value)
    const values = this.#values.get(key)
    if (values === undefined) this.#values.set(key, [normalized])
    else values.push(normalized)
  }

  delete(name: string): void {
    this.#values.delete(checkedName(name))
  }

  get(name: string): string | null {
    return this.#values.get(checkedName(name))?.join(', ') ?? null
  }

  getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])]
  }

  has(name: string): boolean {
    return this.#values.has(checkedName(name))
  }

  set(name: string, value: string): void {
    this.#values.set(checkedName(name), [normalizedValue(value)])
  }

  forEach(
    callback: (value: string, name: string, parent: Headers) => void,
    thisArg?: unknown,
  ): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this)
  }

  /** Sorted by name in code-unit order; each `set-cookie` apart, other names' values joined. */
  *entries(): Generator<[string, string], void> {
    const names = [...this.#values.keys()].sort()
    for (const name of names) {
      const values = this.#values.get(name) ?? []
      if (name === 'set-cookie') for (const value of values) yield [name, value]
      else yield [name, values.join(', ')]
    }
  }

  *keys(): Generator<string, void> {
    for (const [name] of this.entries()) yield name
  }

  *values(): Generator<string, void> {
    for (const [, value] of this.entries()) yield value
  }

  [Symbol.iterator](): Generator<[string, string], void> {
    return this.entries()
  }

  get [Symbol.toStringTag](): string {
    return 'Headers'
  }
}

/** Puts FetchHeaders in the place of Node's global `Headers`; envd's bundle does it first. */
export function useLightFetchHeaders(): void {
  globalThis.Headers = FetchHeaders
}

/** What the constructor takes: undici's own type. */
type HeadersInit = ConstructorParameters<typeof Headers>[0]

/** RFC 9110 token characters: what a field name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Leading and trailing HTTP whitespace, which the spec strips from values. */
const OUTER_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g
/** What a value may not hold once stripped. */
const FORBIDDEN_IN_VALUE = /[\0\r\n]/

function checkedName(name: string): string {
  const text = String(name)
  if (!TOKEN.test(text)) throw new TypeError(`Invalid header name: "${text}"`)
  return text.toLowerCase()
}

function normalizedValue(value: string): string {
  const text = String(value).replace(OUTER_WHITESPACE, '')
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError(`Invalid header value: "${text}"`)
  return text
}
