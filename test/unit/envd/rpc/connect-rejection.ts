import { ConnectError } from '@connectrpc/connect'

/** The ConnectError a call fails with; anything else (or success) fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof ConnectError)) {
    throw new Error(`expected a ConnectError, got ${String(error)}`)
  }
  return error
}
