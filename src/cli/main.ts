import { runEnvdCommand } from '../envd/index.js'

const usage = `usage: sandbar <command>

commands:
  envd [--port N] [--host ADDR]   run the in-sandbox agent (E2B envd) on this host
`

const commands: Record<string, (argv: string[]) => Promise<void>> = {
  envd: runEnvdCommand,
}

const [name, ...rest] = process.argv.slice(2)
const command = name === undefined ? undefined : commands[name]
if (command === undefined) {
  console.error(usage)
  process.exit(name === undefined || name === 'help' || name === '--help' ? 0 : 2)
} else {
  await command(rest)
}
