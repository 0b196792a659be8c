import { runInterpreterCommand } from './index.js'

/** Entry point of the interpreter's bundle (dist/interpreter/interpreter.mjs). */
await runInterpreterCommand(process.argv.slice(2))
