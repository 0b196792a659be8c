/** The OCI `linux.seccomp` object (runtime-spec config-linux.md § Seccomp). */
export interface SeccompProfile {
  defaultAction: 'SCMP_ACT_ALLOW'
  architectures: string[]
  syscalls: { names: string[]; action: 'SCMP_ACT_ERRNO'; errnoRet: number }[]
}

/**
 * Syscalls a sandbox never needs that reach host kernel state. Most are already fenced by the
 * user namespace (they check capabilities in the initial namespace); denying them here keeps
 * one more layer in front of kernel bugs reached through them, as Docker's default does.
 */
export const DENIED_SYSCALLS = [
  'acct',
  'add_key',
  'bpf',
  'clock_adjtime',
  'clock_settime',
  'delete_module',
  'finit_module',
  'init_module',
  'kexec_file_load',
  'kexec_load',
  'keyctl',
  'lookup_dcookie',
  'open_by_handle_at',
  'perf_event_open',
  'quotactl',
  'reboot',
  'request_key',
  'settimeofday',
  'swapoff',
  'swapon',
  'userfaultfd',
]

/** EPERM, as a capability check would answer. */
const EPERM = 1

/**
 * Default-allow with a deny list: crun and runc have no built-in profile, and a full Docker
 * allow-list is large to keep in step with new syscalls. All three x86 ABIs are listed so a
 * 32-bit or x32 call cannot go around the deny list.
 */
export function defaultSeccompProfile(): SeccompProfile {
  return {
    defaultAction: 'SCMP_ACT_ALLOW',
    architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
    syscalls: [{ names: [...DENIED_SYSCALLS], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM }],
  }
}
