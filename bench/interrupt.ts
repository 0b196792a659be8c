/**
 * What a bench section must undo if it is interrupted (Ctrl-C) mid-run: a `sandbar serve` and
 * the sandboxes it leaves by design, the host's KSM settings. The terminal's SIGINT reaches
 * the service too, which shuts down on it; without this the section's process would end at
 * once and nothing would remove what the service left. Each cleanup is removed once it has run
 * the normal way.
 */
/** How an interrupted section exits: 128 + SIGINT, as a shell reports it. */
export const INTERRUPTED_EXIT_CODE = 130

const cleanups = new Set<() => Promise<void>>()
let listening = false

/** Runs `cleanup` on SIGINT unless the returned function is called first. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  // Once: a second Ctrl-C while the cleanups run ends the process at once, as usual.
  if (!listening) process.once('SIGINT', interrupted)
  listening = true
  cleanups.add(cleanup)
  return () => {
    cleanups.delete(cleanup)
  }
}

async function interrupted(): Promise<void> {
  console.error('bench: interrupted; removing what this section made')
  // The latest first, as the finally blocks would have.
  for (const cleanup of [...cleanups].reverse()) {
    await cleanup().catch((error: unknown) => console.error('bench: a cleanup failed:', error))
  }
  process.exit(INTERRUPTED_EXIT_CODE)
}
