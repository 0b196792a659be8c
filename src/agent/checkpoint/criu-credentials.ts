import { readFile } from 'node:fs/promises'

/** Linux capability names by number (capability.h), as setpriv spells them. */
const CAPABILITY_NAMES = [
  'chown',
  'dac_override',
  'dac_read_search',
  'fowner',
  'fsetid',
  'kill',
  'setgid',
  'setuid',
  'setpcap',
  'linux_immutable',
  'net_bind_service',
  'net_broadcast',
  'net_admin',
  'net_raw',
  'ipc_lock',
  'ipc_owner',
  'sys_module',
  'sys_rawio',
  'sys_chroot',
  'sys_ptrace',
  'sys_pacct',
  'sys_admin',
  'sys_boot',
  'sys_nice',
  'sys_resource',
  'sys_time',
  'sys_tty_config',
  'mknod',
  'lease',
  'audit_write',
  'audit_control',
  'setfcap',
  'mac_override',
  'mac_admin',
  'syslog',
  'wake_alarm',
  'block_suspend',
  'audit_read',
  'perfmon',
  'bpf',
  'checkpoint_restore',
]

/**
 * The argv prefix that runs CRIU as the owner of the sandbox's user namespace (its UID; the
 * groups stay root's) with every capability the agent has. CRIU reads each task's rlimits with prlimit(2),
 * which a process of another UID allows only to CAP_SYS_RESOURCE in the task's user
 * namespace; hosts whose bounding set lacks it (this project's VMs) grant it only through the
 * owner rule: the namespace's owner has every capability in it. CRIU then runs in its
 * `--unprivileged` mode, which leaves cgroups out of the dump (sandbox-checkpoint.ts).
 */
export async function asNamespaceOwner(owner: number): Promise<string[]> {
  const status = await readFile('/proc/self/status', 'utf8')
  const bounding = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'}`)
  const caps = CAPABILITY_NAMES.filter((_, bit) => (bounding >> BigInt(bit)) & 1n)
    .map((name) => `+${name}`)
    .join(',')
  return [
    'setpriv',
    // Real as well as effective: a shell on the way (the installed criu is a script that runs
    // CRIU through its loader) resets an effective UID that differs from the real one.
    ...['--reuid', String(owner)],
    // The capabilities stay across the UID change and CRIU's exec (ambient).
    ...['--securebits', '+no_setuid_fixup'],
    ...['--inh-caps', caps],
    ...['--ambient-caps', caps],
    '--',
  ]
}
