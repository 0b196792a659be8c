import { pino } from 'pino'
import { type AgentConfig, createAgent } from '../../src/agent/index.js'

// An agent in a process of its own, so a test can SIGKILL it mid-life: argv[2] is the
// AgentConfig (without logger) as JSON, argv[3] the sandbox ID to create. It prints the
// sandbox's info as one JSON line and then waits to be killed. argv[4] is the base layer's ID.
const [configJSON = '{}', sandboxID = '', baseLayerID = ''] = process.argv.slice(2)
const config: AgentConfig = { ...JSON.parse(configJSON), logger: pino({ level: 'silent' }) }
const agent = await createAgent(config)
const info = await agent.create({
  sandboxID,
  template: {
    templateID: 'base',
    layers: [baseLayerID],
    defaultUser: 'user',
    defaultWorkdir: '/home/user',
  },
  cpuCount: 1,
  memoryMB: 256,
  diskSizeMB: 512,
  envVars: {},
  egress: { allowOut: [], denyOut: [] },
})
console.log(JSON.stringify(info))
setInterval(() => undefined, 60_000)
