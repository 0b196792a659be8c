// A user's program, run after `set -a; . client.env; set +a`: E2B_DOMAIN, E2B_API_KEY and
// NODE_EXTRA_CA_CERTS are all that configure the SDK release named by argv[2] (`e2b`, or an npm
// alias of an older release). It creates a sandbox, uses it as E2B's docs show, hands its URLs
// to other programs (fetch, curl), and prints what it saw as one JSON line.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)
const { Sandbox } = await import(process.argv[2])

const sandbox = await Sandbox.create()
const report = { sandboxId: sandbox.sandboxId, host: sandbox.getHost(8000) }
try {
  report.user = (await sandbox.commands.run('id -un')).stdout.trim()
  report.failure = await sandbox.commands.run('exit 3').then(
    () => 'no error',
    (error) => ({ name: error.name, exitCode: error.exitCode }),
  )
  await sandbox.files.write('/home/user/note.txt', 'written through the SDK')
  report.listed = (await sandbox.files.list('/home/user')).map((entry) => entry.name)
  await sandbox.setTimeout(120_000)
  report.running = await sandbox.isRunning()

  const downloadUrl = await sandbox.downloadUrl('/home/user/note.txt')
  const download = await fetch(downloadUrl)
  report.download = { url: downloadUrl, status: download.status, body: await download.text() }

  const uploadUrl = await sandbox.uploadUrl('/home/user/uploaded.txt')
  const form = new FormData()
  form.append('file', new Blob(['sent with plain fetch']), 'uploaded.txt')
  const upload = await fetch(uploadUrl, { method: 'POST', body: form })
  report.upload = { url: uploadUrl, status: upload.status }
  report.uploaded = await sandbox.files.read('/home/user/uploaded.txt')

  // `python`, as E2B's docs write it, not only python3.
  await sandbox.commands.run('python -m http.server 8000 --directory /etc', { background: true })
  // curl retries the proxy's 502 while the server starts; a browser on this machine uses http.
  const curl = async (url, ...flags) =>
    (await run('curl', ['-sS', '--retry', '20', '--retry-delay', '1', ...flags, url])).stdout
  report.curlHttp = await curl(`http://${report.host}/hostname`)
  report.curlHttps = await curl(
    `https://${report.host}/hostname`,
    '--cacert',
    process.env.NODE_EXTRA_CA_CERTS,
  )

  report.connectedHost = (await Sandbox.connect(sandbox.sandboxId)).getHost(8000)
} finally {
  await sandbox.kill()
}
report.runningAfterKill = await sandbox.isRunning()
console.log(JSON.stringify(report))
