import flags from './node-flags.json' with { type: 'json' }

/**
 * The V8 flags envd's node runs with: in sandboxes (the toolbox's argv) and when the build
 * writes envd's code cache (scripts/build.mjs reads the JSON), since V8 rejects a cache made
 * under other flags. `--optimize-for-size` keeps V8's young generation small instead of
 * letting it grow to 2 × 16 MiB under load and keeping it while idle: after 200 commands an
 * envd held 33 MiB of anonymous memory without it and 19 MiB with it, after one command
 * 15.6 and 15.0 MiB, and its commands took as long (1.71 and 1.68 ms p50 on the host).
 */
export const ENVD_NODE_FLAGS: readonly string[] = flags
