// Fails when src/envd/gen is stale: regenerates it in place and asks git whether that changed it.
import { execFileSync } from 'node:child_process'

execFileSync('npx', ['buf', 'generate'], { stdio: 'inherit' })
const diff = execFileSync('git', ['status', '--porcelain', '--', 'src/envd/gen'], {
  encoding: 'utf8',
})
if (diff.trim() !== '') {
  console.error(`generated code is stale; run \`npm run generate\` and commit:\n${diff}`)
  process.exit(1)
}
