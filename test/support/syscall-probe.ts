/**
 * A Python program that tries the syscalls an escape from a container usually starts with and
 * prints, as one JSON object, `ok` or the errno name each one got. With a uid argument it first
 * drops to that uid (as root inside a sandbox, to probe as the plain user too).
 *
 * Each call is a raw `syscall(2)` by x86-64 number, so no libc wrapper or missing binary stands
 * between the probe and the kernel's (or seccomp's) answer.
 */
export const SYSCALL_PROBE = `
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x20000, 0x10000000, 0x40000000, 17
AT_FDCWD = -100

if len(sys.argv) > 1:
    uid = int(sys.argv[1])
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)

def call(nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(L(nr), *args)
    if result == 0 and nr in (56, 435):
        os._exit(0)  # the child of a clone that went through
    if result > 0 and nr in (56, 435):
        os.waitpid(result, 0)
    return 'ok' if result >= 0 else errno.errorcode[ctypes.get_errno()]

def fork():
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    return 'ok'

def thread():
    import threading
    done = []
    worker = threading.Thread(target=lambda: done.append('ok'))
    worker.start()
    worker.join()
    return done[0]

clone_args = (ctypes.c_uint64 * 8)(CLONE_NEWUSER, 0, 0, 0, SIGCHLD, 0, 0, 0)
probes = {
    'unshare(CLONE_NEWUSER)': lambda: call(272, L(CLONE_NEWUSER)),
    'unshare(CLONE_NEWNS)': lambda: call(272, L(CLONE_NEWNS)),
    'unshare(CLONE_NEWNET)': lambda: call(272, L(CLONE_NEWNET)),
    'clone(CLONE_NEWUSER)': lambda: call(56, L(CLONE_NEWUSER | SIGCHLD), L(0), L(0), L(0), L(0)),
    'clone3(CLONE_NEWUSER)': lambda: call(435, ctypes.byref(clone_args), L(64)),
    'setns': lambda: call(308, L(-1), L(0)),
    'mount': lambda: call(165, b'none', b'/tmp', b'tmpfs', L(0), None),
    'io_uring_setup': lambda: call(425, L(1), ctypes.create_string_buffer(120)),
    'fsopen': lambda: call(430, b'tmpfs', L(0)),
    'open_tree': lambda: call(428, L(AT_FDCWD), b'/', L(0)),
    # Named nowhere in the profile: its default action answers.
    'kcmp': lambda: call(312, L(os.getpid()), L(os.getpid()), L(0), L(0), L(0)),
    'fork': fork,
    'thread': thread,
}
def isolated(probe):
    # In a child of its own: a probe that went through (a new namespace, a mount) must not
    # change what the next one sees.
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(write_end, probe().encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    return os.read(read_end, 64).decode()

print(json.dumps({name: isolated(probe) for name, probe in probes.items()}))
`

/** What every probe gets under Sandbar's seccomp profile, as root inside and as a plain user. */
export const EXPECTED_PROBE_RESULTS = {
  'unshare(CLONE_NEWUSER)': 'EPERM',
  'unshare(CLONE_NEWNS)': 'EPERM',
  'unshare(CLONE_NEWNET)': 'EPERM',
  'clone(CLONE_NEWUSER)': 'EPERM',
  // ENOSYS, as Docker answers: glibc then falls back to clone, whose flags the filter can see.
  'clone3(CLONE_NEWUSER)': 'ENOSYS',
  setns: 'EPERM',
  mount: 'EPERM',
  io_uring_setup: 'EPERM',
  fsopen: 'EPERM',
  open_tree: 'EPERM',
  kcmp: 'ENOSYS',
  fork: 'ok',
  thread: 'ok',
}
