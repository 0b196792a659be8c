import { runEnvdCommand } from './index.js'

// Entry point of the self-contained envd bundle (dist/envd/envd.mjs) that sandboxes run.
await runEnvdCommand(process.argv.slice(2))
