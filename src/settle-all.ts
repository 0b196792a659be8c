/**
 * Awaits every task, then throws the first failure: steps run side by side, and none is still
 * running behind a throw, so the caller's cleanup never races a half-finished one.
 */
export async function settleAll(tasks: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(tasks)
  const failed = results.find((result) => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
}
