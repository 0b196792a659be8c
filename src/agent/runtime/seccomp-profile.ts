/** One argument test of a seccomp rule (runtime-spec config-linux.md § Seccomp). */
interface SeccompArg {
  index: number
  value: number
  /** With SCMP_CMP_MASKED_EQ: `(arg & value) == valueTwo`. */
  valueTwo?: number
  op: 'SCMP_CMP_NE' | 'SCMP_CMP_EQ' | 'SCMP_CMP_MASKED_EQ'
}

interface SeccompRule {
  names: string[]
  action: 'SCMP_ACT_ALLOW' | 'SCMP_ACT_ERRNO'
  errnoRet?: number
  args?: SeccompArg[]
}

/** The OCI `linux.seccomp` object (runtime-spec config-linux.md § Seccomp). */
export interface SeccompProfile {
  defaultAction: 'SCMP_ACT_ERRNO'
  defaultErrnoRet: number
  architectures: string[]
  syscalls: SeccompRule[]
}

const EPERM = 1
const ENOSYS = 38

/**
 * What a Linux userland needs: the allow-list of Docker's default profile (moby
 * profiles/seccomp/default.json) for a container without CAP_SYS_ADMIN, less io_uring, plus
 * the syscalls added to the kernel since (a name the host's libseccomp does not know is skipped
 * by the runtime and so gets the default ENOSYS, which is what libc expects of an old kernel).
 */
export const ALLOWED_SYSCALLS = [
  'accept',
  'accept4',
  'access',
  // Reading the clock's tuning; changing it needs CAP_SYS_TIME in the host's namespace.
  'adjtimex',
  'alarm',
  'bind',
  'brk',
  'cachestat',
  'capget',
  'capset',
  'chdir',
  'chmod',
  'chown',
  'chown32',
  // chroot: CAP_SYS_CHROOT is in the sandbox's capability set (Docker allows it then too).
  'chroot',
  'clock_adjtime',
  'clock_adjtime64',
  'clock_getres',
  'clock_getres_time64',
  'clock_gettime',
  'clock_gettime64',
  'clock_nanosleep',
  'clock_nanosleep_time64',
  'close',
  'close_range',
  'connect',
  'copy_file_range',
  'creat',
  'dup',
  'dup2',
  'dup3',
  'epoll_create',
  'epoll_create1',
  'epoll_ctl',
  'epoll_ctl_old',
  'epoll_pwait',
  'epoll_pwait2',
  'epoll_wait',
  'epoll_wait_old',
  'eventfd',
  'eventfd2',
  'execve',
  'execveat',
  'exit',
  'exit_group',
  'faccessat',
  'faccessat2',
  'fadvise64',
  'fadvise64_64',
  'fallocate',
  'fanotify_mark',
  'fchdir',
  'fchmod',
  'fchmodat',
  'fchmodat2',
  'fchown',
  'fchown32',
  'fchownat',
  'fcntl',
  'fcntl64',
  'fdatasync',
  'fgetxattr',
  'flistxattr',
  'flock',
  'fork',
  'fremovexattr',
  'fsetxattr',
  'fstat',
  'fstat64',
  'fstatat64',
  'fstatfs',
  'fstatfs64',
  'fsync',
  'ftruncate',
  'ftruncate64',
  'futex',
  'futex_requeue',
  'futex_time64',
  'futex_wait',
  'futex_waitv',
  'futex_wake',
  'futimesat',
  'getcpu',
  'getcwd',
  'getdents',
  'getdents64',
  'getegid',
  'getegid32',
  'geteuid',
  'geteuid32',
  'getgid',
  'getgid32',
  'getgroups',
  'getgroups32',
  'getitimer',
  'getpeername',
  'getpgid',
  'getpgrp',
  'getpid',
  'getppid',
  'getpriority',
  'getrandom',
  'getresgid',
  'getresgid32',
  'getresuid',
  'getresuid32',
  'getrlimit',
  'get_robust_list',
  'getrusage',
  'getsid',
  'getsockname',
  'getsockopt',
  'get_thread_area',
  'gettid',
  'gettimeofday',
  'getuid',
  'getuid32',
  'getxattr',
  // inotify: envd's WatchDir and every file watcher (its budget is a host limit, issue 9 item 9).
  'inotify_add_watch',
  'inotify_init',
  'inotify_init1',
  'inotify_rm_watch',
  'io_cancel',
  'ioctl',
  'io_destroy',
  'io_getevents',
  'io_pgetevents',
  'io_pgetevents_time64',
  'ioprio_get',
  'ioprio_set',
  'io_setup',
  'io_submit',
  'ipc',
  'kill',
  'landlock_add_rule',
  'landlock_create_ruleset',
  'landlock_restrict_self',
  'lchown',
  'lchown32',
  'lgetxattr',
  'link',
  'linkat',
  'listen',
  'listxattr',
  'llistxattr',
  '_llseek',
  'lremovexattr',
  'lseek',
  'lsetxattr',
  'lstat',
  'lstat64',
  'madvise',
  'map_shadow_stack',
  'membarrier',
  'memfd_create',
  'memfd_secret',
  'mincore',
  'mkdir',
  'mkdirat',
  'mknod',
  'mknodat',
  'mlock',
  'mlock2',
  'mlockall',
  'mmap',
  'mmap2',
  'mprotect',
  'mq_getsetattr',
  'mq_notify',
  'mq_open',
  'mq_timedreceive',
  'mq_timedreceive_time64',
  'mq_timedsend',
  'mq_timedsend_time64',
  'mq_unlink',
  'mremap',
  'mseal',
  'msgctl',
  'msgget',
  'msgrcv',
  'msgsnd',
  'msync',
  'munlock',
  'munlockall',
  'munmap',
  'name_to_handle_at',
  'nanosleep',
  'newfstatat',
  '_newselect',
  'open',
  'openat',
  'openat2',
  'pause',
  // pidfd_getfd takes the same ptrace access check as ptrace itself (allowed below), so it
  // grants nothing ptrace does not; debuggers and process supervisors use it.
  'pidfd_getfd',
  'pidfd_open',
  'pidfd_send_signal',
  'pipe',
  'pipe2',
  'pkey_alloc',
  'pkey_free',
  'pkey_mprotect',
  'poll',
  'ppoll',
  'ppoll_time64',
  'prctl',
  'pread64',
  'preadv',
  'preadv2',
  'prlimit64',
  'process_mrelease',
  // ptrace and the process_vm calls: strace, gdb and debuggers in the sandbox. Docker allows
  // them on kernels >= 4.8, where a tracer can no longer skip the tracee's seccomp filter; the
  // pid namespace and the user namespace keep the tracees to the sandbox's own processes.
  'process_vm_readv',
  'process_vm_writev',
  'pselect6',
  'pselect6_time64',
  'ptrace',
  'pwrite64',
  'pwritev',
  'pwritev2',
  'read',
  'readahead',
  'readlink',
  'readlinkat',
  'readv',
  'recv',
  'recvfrom',
  'recvmmsg',
  'recvmmsg_time64',
  'recvmsg',
  'remap_file_pages',
  'removexattr',
  'rename',
  'renameat',
  'renameat2',
  'restart_syscall',
  'rmdir',
  'rseq',
  'rt_sigaction',
  'rt_sigpending',
  'rt_sigprocmask',
  'rt_sigqueueinfo',
  'rt_sigreturn',
  'rt_sigsuspend',
  'rt_sigtimedwait',
  'rt_sigtimedwait_time64',
  'rt_tgsigqueueinfo',
  'sched_getaffinity',
  'sched_getattr',
  'sched_getparam',
  'sched_get_priority_max',
  'sched_get_priority_min',
  'sched_getscheduler',
  'sched_rr_get_interval',
  'sched_rr_get_interval_time64',
  'sched_setaffinity',
  'sched_setattr',
  'sched_setparam',
  'sched_setscheduler',
  'sched_yield',
  // A process may narrow its own filter (Chromium, systemd units): filters only ever stack.
  'seccomp',
  'select',
  'semctl',
  'semget',
  'semop',
  'semtimedop',
  'semtimedop_time64',
  'send',
  'sendfile',
  'sendfile64',
  'sendmmsg',
  'sendmsg',
  'sendto',
  // The set*id family: sudo, su and envd's run-as change users inside the sandbox, bounded
  // by the user namespace's ID map.
  'setfsgid',
  'setfsgid32',
  'setfsuid',
  'setfsuid32',
  'setgid',
  'setgid32',
  'setgroups',
  'setgroups32',
  'setitimer',
  'setpgid',
  'setpriority',
  'setregid',
  'setregid32',
  'setresgid',
  'setresgid32',
  'setresuid',
  'setresuid32',
  'setreuid',
  'setreuid32',
  'setrlimit',
  'set_robust_list',
  'setsid',
  'setsockopt',
  'set_thread_area',
  'set_tid_address',
  'setuid',
  'setuid32',
  'setxattr',
  'shmat',
  'shmctl',
  'shmdt',
  'shmget',
  'shutdown',
  'sigaltstack',
  'signalfd',
  'signalfd4',
  'sigprocmask',
  'sigreturn',
  'socketcall',
  'socketpair',
  'splice',
  'stat',
  'stat64',
  'statfs',
  'statfs64',
  'statx',
  'symlink',
  'symlinkat',
  'sync',
  'sync_file_range',
  'syncfs',
  'sysinfo',
  'tee',
  'tgkill',
  'time',
  'timer_create',
  'timer_delete',
  'timer_getoverrun',
  'timer_gettime',
  'timer_gettime64',
  'timer_settime',
  'timer_settime64',
  'timerfd_create',
  'timerfd_gettime',
  'timerfd_gettime64',
  'timerfd_settime',
  'timerfd_settime64',
  'times',
  'tkill',
  'truncate',
  'truncate64',
  'ugetrlimit',
  'umask',
  'uname',
  'unlink',
  'unlinkat',
  'utime',
  'utimensat',
  'utimensat_time64',
  'utimes',
  'vfork',
  'vmsplice',
  'wait4',
  'waitid',
  'waitpid',
  'write',
  'writev',
  // x86 only: TLS setup (every x86-64 process) and 16-bit segments (Wine, old 32-bit code).
  'arch_prctl',
  'modify_ldt',
]

/**
 * Refused with EPERM, the answer of a failed capability check, so tools report "Operation not
 * permitted" rather than a missing kernel feature. These are the usual first steps from a
 * kernel bug to an escape:
 * - a nested user namespace gives its creator every capability over fresh network, mount and
 *   other namespaces, and so the kernel code behind CAP_NET_ADMIN and CAP_SYS_ADMIN (unshare,
 *   setns; clone and clone3 are handled by flag below);
 * - mount(2), and the new mount API, which works on file descriptors the flags of clone never
 *   show;
 * - io_uring, whose rings run syscall-like operations outside seccomp's view, and which Docker
 *   and ChromeOS turned off for its kernel bugs;
 * - kernel-wide state: modules, kexec, keyrings, BPF, perf, the clock, swap, quotas, accounting,
 *   the kernel log, userfaultfd (a common exploit aid).
 */
export const REFUSED_SYSCALLS = [
  'unshare',
  'setns',
  'mount',
  'umount',
  'umount2',
  'pivot_root',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'move_mount',
  'open_tree',
  'mount_setattr',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'acct',
  'add_key',
  'bpf',
  'clock_settime',
  'clock_settime64',
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
  'quotactl_fd',
  'reboot',
  'request_key',
  'settimeofday',
  'stime',
  'swapoff',
  'swapon',
  'syslog',
  'userfaultfd',
]

/** The namespace flags of clone(2): CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NEW_FLAGS = [
  0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000,
]
const CLONE_NAMESPACES = CLONE_NEW_FLAGS.reduce((mask, flag) => mask | flag, 0)

/** AF_VSOCK: sockets to the hypervisor of the VM the host itself may be. */
const AF_VSOCK = 40

/**
 * personality(2) values Docker allows: PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32|UNAME26,
 * and 0xffffffff, which only queries; and ADDR_NO_RANDOMIZE (`setarch -R`), which fixes the
 * layout of the caller's own memory only, and which envd's launcher sets under `serve
 * --share-envd-memory` (share-memory.c). The others switch on legacy behaviour such as
 * READ_IMPLIES_EXEC.
 */
const PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0x40000, 0xffffffff]

/**
 * clone3 passes its flags in memory, which seccomp cannot read: ENOSYS makes glibc (2.34 and
 * later) fall back to clone, whose flags the rules above see. Docker does the same.
 */
const CLONE3: SeccompRule = { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS }

/**
 * gVisor (runsc 2024-07) answers every refused syscall with EPERM, whatever errnoRet says
 * (measured: clone3 and kcmp), and glibc falls back from clone3 only on ENOSYS, so refusing it
 * there stops every thread from starting. Allowed: a namespace made with it is one of the
 * sentry's own kernel, not of the host's.
 */
const GVISOR_CLONE3: SeccompRule = { names: ['clone3'], action: 'SCMP_ACT_ALLOW' }

/**
 * An allow-list in the spirit of Docker's default profile (DESIGN.md § Trust): what is not
 * named fails with ENOSYS, as containerd's and CRI-O's defaults do, so a syscall newer than this
 * list (or than the host's libseccomp) looks absent and libc falls back to an older one; a
 * refusal that would otherwise look like a missing feature gets EPERM. All three x86 ABIs are
 * filtered, so a 32-bit or x32 call cannot go around the list.
 */
export function defaultSeccompProfile(options: { ownKernel: boolean }): SeccompProfile {
  return {
    defaultAction: 'SCMP_ACT_ERRNO',
    defaultErrnoRet: ENOSYS,
    architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
    syscalls: [
      { names: [...ALLOWED_SYSCALLS], action: 'SCMP_ACT_ALLOW' },
      { names: [...REFUSED_SYSCALLS], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
      {
        names: ['socket'],
        action: 'SCMP_ACT_ALLOW',
        args: [{ index: 0, value: AF_VSOCK, op: 'SCMP_CMP_NE' }],
      },
      ...PERSONALITIES.map(
        (persona): SeccompRule => ({
          names: ['personality'],
          action: 'SCMP_ACT_ALLOW',
          args: [{ index: 0, value: persona, op: 'SCMP_CMP_EQ' }],
        }),
      ),
      // Threads and fork (glibc's fork is clone) go through; a new namespace is refused.
      {
        names: ['clone'],
        action: 'SCMP_ACT_ALLOW',
        args: [{ index: 0, value: CLONE_NAMESPACES, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      },
      ...CLONE_NEW_FLAGS.map(
        (flag): SeccompRule => ({
          names: ['clone'],
          action: 'SCMP_ACT_ERRNO',
          errnoRet: EPERM,
          args: [{ index: 0, value: flag, valueTwo: flag, op: 'SCMP_CMP_MASKED_EQ' }],
        }),
      ),
      options.ownKernel ? GVISOR_CLONE3 : CLONE3,
    ],
  }
}
