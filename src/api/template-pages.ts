import { apiErrors } from './errors.js'

/** One page of a list and the token of the next (§1.1 pagination, `X-Next-Token`). */
export interface Page<T> {
  items: T[]
  nextToken?: string
}

/**
 * Pages a list already in its order: the token names the last item returned (URL-safe base64
 * of its key), so a page starts after it even when items were added meanwhile.
 */
export function pageOf<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  limit: number,
  nextToken: string | undefined,
): Page<T> {
  let start = 0
  if (nextToken !== undefined) {
    const key = Buffer.from(nextToken, 'base64url').toString('utf8')
    const index = items.findIndex((item) => keyOf(item) === key)
    if (index === -1) throw apiErrors.validation('invalid nextToken')
    start = index + 1
  }
  const page = items.slice(start, start + limit)
  const last = page.at(-1)
  const more = start + limit < items.length && last !== undefined
  return {
    items: page,
    nextToken: more ? Buffer.from(keyOf(last), 'utf8').toString('base64url') : undefined,
  }
}

/** A list's page size when the request names none (§1.1). */
const DEFAULT_PAGE = 100

/**
 * The page a list route's `limit` and `nextToken` ask for, with `X-Next-Token` set on the
 * reply when more follow.
 */
export function pageForQuery<T>(
  reply: { header(name: string, value: string): void },
  items: readonly T[],
  keyOf: (item: T) => string,
  query: { limit?: string; nextToken?: string },
): T[] {
  const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit)
  const page = pageOf(items, keyOf, limit, query.nextToken)
  if (page.nextToken !== undefined) reply.header('X-Next-Token', page.nextToken)
  return page.items
}
