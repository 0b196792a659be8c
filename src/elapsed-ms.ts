/** Whole milliseconds since `since` (a `performance.now()`): the `durationMs` logs carry. */
export function elapsedMs(since: number): number {
  return Math.round(performance.now() - since)
}
