// without-unified-cgroup MOUNT_POINT BINARY [ARG...]
//
// Runs BINARY in a private mount namespace from which the cgroup2 mount of a hybrid host, at
// MOUNT_POINT, is gone: crun 1.8 refuses a host where it sees both cgroup versions, and with
// the v1 hierarchies alone it uses them (host-facts § OCI runtimes). Mounts made in the new
// namespace stay in it, and it ends with BINARY's process.
//
// One exec where unshare(1), sh and umount(8) were three, and umount(8) read the whole mount
// table, which grows with every sandbox on the host (runtime-args.ts).
//
// Exit status: BINARY's; 125 a call failed (named on stderr), 127 BINARY did not run, 2 bad
// usage.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static int fail(const char *call, const char *what, int status) {
  fprintf(stderr, "without-unified-cgroup: %s %s: %s\n", call, what, strerror(errno));
  return status;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: without-unified-cgroup MOUNT_POINT BINARY [ARG...]\n");
    return 2;
  }
  if (unshare(CLONE_NEWNS) != 0) return fail("unshare", "CLONE_NEWNS", 125);
  // Private first, or the unmount would propagate back to the host's namespace.
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return fail("mount", "/", 125);
  if (umount2(argv[1], UMOUNT_NOFOLLOW) != 0) return fail("umount2", argv[1], 125);
  execvp(argv[2], argv + 2);
  return fail("exec", argv[2], 127);
}
