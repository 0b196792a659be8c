/**
 * What a bench section must undo if it is interrupted (Ctrl-C) mid-run: a `sandbar serve` and
 * the sandboxes it leaves by design, the host's KSM settings, the floors' bare containers and
 * CRIU's processes. The terminal's SIGINT reaches the service too, which shuts down on it;
 * without this the section's process would end at once and nothing would remove what the
 * service left. Each cleanup is removed once it has run the normal way.
 */
/** How an interrupted section exits: 128 + SIGINT, as a shell reports it. */
export const INTERRUPTED_EXIT_CODE = 130

const cleanups = new Set<() => Promise<void>>()
let listening = false

/**
 * `cleanup`, run on SIGINT too. The returned function runs it once, whether the section's own
 * code or an interrupt asks first, and an interrupt that comes while it runs waits for that run
 * instead of ending the process under it.
 */
export function cleanupOnInterrupt(cleanup: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined
  const once = (): Promise<void> => {
    running ??= cleanup().finally(() => cleanups.delete(once))
    return running
  }
  // Once: a second Ctrl-C while the cleanups run ends the process at once, as usual.
  if (!listening) process.once('SIGINT', interrupted)
  listening = true
  cleanups.add(once)
  return once
}

async function interrupted(): Promise<void> {
  console.error('bench: interrupted; removing what this section made')
  // The latest first, as the finally blocks would have.
  for (const cleanup of [...cleanups].reverse()) {
    await cleanup().catch((error: unknown) => console.error('bench: a cleanup failed:', error))
  }
  process.exit(INTERRUPTED_EXIT_CODE)
}
