import { runEnvdCommand } from '../envd/index.js'
import { DataDirInUseError } from './data-dir-lock.js'
import { parseServeArgs, runServe, UsageError } from './serve.js'

const usage = `usage: sandbar <command>

commands:
  envd [--port N] [--host ADDR]   run the in-sandbox agent (E2B envd) on this host
  serve [--data-dir DIR] [--templates-dir DIR] [--host ADDR] [--api-port N] [--proxy-port N]
        [--domain D] [--tls-cert FILE --tls-key FILE] [--prefix P] [--runtime crun|runc|runsc]
        [--no-masquerade] [--masquerade-builds] [--build-ca-file FILE] [--address-pool CIDR]
        [--max-sandboxes N] [--max-lifetime-hours N] [--keep-unused-layers]
        [--no-code-interpreter] [--warm-pool TEMPLATE_ID=N]... [--warm-pool-memory MiB]
        [--hibernate-after SECONDS] [--hibernate] [--share-envd-memory]
        [--volume-size-mb MiB] [--volume-token-ttl SECONDS]
        [--postgres-url URL] [--log-format pretty|json]
                                  run the E2B-compatible service: api, proxy, agent, store
      --domain D                  what clients put after api. and <port>-<sandboxID>. (E2B_DOMAIN),
                                  a port may follow; default sandbar.localhost:<proxy port>
      --tls-cert, --tls-key       a certificate for D and *.D; without them Sandbar makes its own,
                                  whose authority client.env names in NODE_EXTRA_CA_CERTS
      --max-sandboxes N           sandboxes running at once before create answers 429; default
                                  the most the host holds with every sandbox at its limits:
                                  its memory (the host keeps max(1 GiB, 10%)), its pids within
                                  the pids budget, its open files within fs.file-max, and a /30
                                  of the address pool; serve prints the limit and what bounds it
      --no-masquerade             sandboxes' traffic never leaves through the host's uplinks
      --masquerade-builds         with --no-masquerade, template builds still reach the
                                  internet (aptInstall, npmInstall); other sandboxes do not
      --build-ca-file FILE        certificate authorities (PEM) build steps trust, for a network
                                  behind a TLS-intercepting proxy; never kept in a template
      --keep-unused-layers        never remove template layers, for a --templates-dir that other
                                  services share (by default layers no template uses go)
      --no-code-interpreter       build no code-interpreter-v1, the template @e2b/code-interpreter
                                  starts (its first build installs Python packages from Debian's
                                  archive: minutes; later starts reuse it)
      --warm-pool TEMPLATE_ID=N   keep N sandboxes of the template started and ready, so creates
                                  take one instead of starting it (a create then waits only for
                                  its own settings); defaults base=2 and code-interpreter-v1=1,
                                  =0 turns a pool off; repeat for more templates. Waiting
                                  sandboxes run at the lowest CPU weight and survive restarts
      --warm-pool-memory MiB      the most memory waiting sandboxes may hold in all, by their
                                  limits; default a tenth of the host's
      --hibernate-after SECONDS   a paused sandbox stays frozen in memory (resumes in
                                  milliseconds) this long, then its processes are written to
                                  disk with CRIU and its memory is freed; it survives restarts
                                  of Sandbar and of the host, and resumes in a fraction of a
                                  second. Default 600; 0 hibernates at once. Sooner, oldest
                                  first, while the host has less memory available than it
                                  keeps for itself (1 GiB or a tenth, whichever is more)
      --hibernate                 on SIGTERM or SIGINT, pause every running sandbox and
                                  hibernate every paused one before stopping, so that a reboot
                                  of the host loses none; each resumes at its client's connect
      --share-envd-memory         the kernel's KSM shares the memory pages that envd, the agent
                                  in every sandbox, has in common with other sandboxes' envds:
                                  an idle sandbox then holds 3-6 MiB, not 14 (Linux 6.4 or
                                  later; serve starts ksmd, which takes 1-9% of a core).
                                  Sandboxes' own programs are never merged, but a sandbox can
                                  time its writes to learn when another's envd touches a shared
                                  page: give it where the sandboxes' users trust each other
      --volume-size-mb MiB        the size limit of a volume whose create names none (POST
                                  /volumes takes Sandbar's sizeMB field); default 10240, from
                                  16 to 1048576; the volume's filesystem refuses writes past it
      --volume-token-ttl SECONDS  how long a volume token lets its holder reach the volume's
                                  content; default 3600, as E2B's
      --log-format pretty|json    stderr's log: readable lines (time, warnings, sandboxes and
                                  builds with their durations) or one JSON object a line;
                                  default pretty on a terminal, json otherwise
`

const commands: Record<string, (argv: string[]) => Promise<void>> = {
  serve: async (argv) => runServe(parseServeArgs(argv)),
  envd: async (argv) => {
    const envd = await runEnvdCommand(argv)
    console.log(`envd is listening on port ${envd.port}. Point the e2b SDK at it with debug mode:
  export E2B_DEBUG=true${envd.port === 49983 ? '' : `\n  export E2B_SANDBOX_URL=http://localhost:${envd.port}`}
  node -e "const { Sandbox } = require('e2b'); Sandbox.create().then(s => s.commands.run('uname -a')).then(r => console.log(r.stdout))"`)
  },
}

const [name, ...rest] = process.argv.slice(2)
const command = name === undefined ? undefined : commands[name]
if (command === undefined) {
  console.error(usage)
  process.exit(name === undefined || name === 'help' || name === '--help' ? 0 : 2)
} else if (rest.includes('--help') || rest.includes('-h')) {
  console.log(usage)
} else {
  await command(rest).catch((error: unknown) => {
    if (error instanceof DataDirInUseError) {
      console.error(`sandbar ${name}: ${error.message}`)
      process.exit(1)
    }
    if (!isUsageError(error)) throw error
    console.error(`sandbar ${name}: ${error.message}\n\n${usage}`)
    process.exit(2)
  })
}

/** Bad flags: ours, or node:util parseArgs's (`ERR_PARSE_ARGS_*`). */
function isUsageError(error: unknown): error is Error {
  if (error instanceof UsageError) return true
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}
