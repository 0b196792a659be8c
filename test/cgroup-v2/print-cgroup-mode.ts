// Prints the agent's own reading of the cgroup set-up as JSON, for the guest's report
// (guest-stage2.sh): the agent picks how to drive crun from this.
import { readCgroupMode } from '../../src/agent/runtime/cgroup-mode.js'

console.log(JSON.stringify(await readCgroupMode()))
