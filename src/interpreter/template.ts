import { toolboxNodeArgv } from '../agent/index.js'
import type { SystemTemplate } from '../api/system-templates.js'
import { INTERPRETER_PORT } from './port.js'

/**
 * Debian's packages for the python kernel and what E2B's interpreter users reach for first
 * (wave2-contracts §1): IPython, matplotlib, pandas, numpy, Pillow, SciPy; and R for r
 * contexts (workers/r-worker.ts).
 */
const PACKAGES = [
  'python3-ipython',
  'python3-matplotlib',
  'python3-numpy',
  'python3-pandas',
  'python3-pil',
  'python3-scipy',
  'r-base-core',
]

const APT_INSTALL = [
  'apt-get update',
  `DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${PACKAGES.join(' ')}`,
  'rm -rf /var/lib/apt/lists/*',
].join(' && ')

/**
 * matplotlib builds its font cache at its first import (seconds); made here, root's cache is in
 * the template and every sandbox's first chart is as quick as the next.
 */
const FONT_CACHE = "python3 -c 'import matplotlib.pyplot'"

/**
 * The server runs as root, as E2B's does (code sees `whoami` = root, cwd /home/user), from the
 * toolbox every sandbox has, so it is always the running Sandbar's. The loop brings it back
 * within a second when something kills it (issue 12, resilience); its workers are restarted by
 * the server itself.
 */
const START_CMD = `sudo /bin/bash -c 'while :; do ${toolboxNodeArgv('interpreter/interpreter.mjs').join(' ')}; sleep 0.5; done'`

/** `code-interpreter-v1`: what `@e2b/code-interpreter` creates its sandboxes from. */
export const CODE_INTERPRETER_TEMPLATE: SystemTemplate = {
  templateID: 'code-interpreter-v1',
  sizes: { cpuCount: 2, memoryMB: 1024, diskSizeMB: 1024 },
  from: { template: 'base' },
  steps: [
    { type: 'RUN', args: [APT_INSTALL, 'root'], force: false },
    { type: 'RUN', args: [FONT_CACHE, 'root'], force: false },
  ],
  startCmd: START_CMD,
  readyCmd: `curl -fsS -o /dev/null http://localhost:${INTERPRETER_PORT}/health`,
}
