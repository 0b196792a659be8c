// idmap-mount USERNS SOURCE TARGET [SOURCE TARGET]...
//
// Mounts each SOURCE directory at TARGET read-only and idmapped through the user namespace
// file USERNS (mount_setattr(2), MOUNT_ATTR_IDMAP): inside, a file of host ID 0 is the
// namespace's root. The agent stacks these as a sandbox's overlay layers (idmapped-layers.ts).
// bookworm's mount(8) lacks `X-mount.idmap` and Node cannot make these calls; the syscalls go
// through syscall(2) because glibc 2.36 wraps none of them. Exit status: 0 done, 1 a call
// failed (named on stderr; mounts already made stay for the caller to detach), 2 bad usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail(const char *call, const char *path) {
  fprintf(stderr, "idmap-mount: %s %s: %s\n", call, path, strerror(errno));
  return 1;
}

static int idmap_mount(int userns, const char *source, const char *target) {
  // A detached copy of SOURCE's mount tree: its attributes change without touching SOURCE.
  int tree = (int)syscall(SYS_open_tree, AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0) return fail("open_tree", source);
  struct mount_attr attr = {
      .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY,
      .userns_fd = (uint64_t)userns,
  };
  int status = 0;
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
    status = fail("mount_setattr", source);
  else if (syscall(SYS_move_mount, tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    status = fail("move_mount to", target);
  close(tree);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc % 2 != 0) {
    fprintf(stderr, "usage: idmap-mount USERNS SOURCE TARGET [SOURCE TARGET]...\n");
    return 2;
  }
  int userns = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (userns < 0) return fail("open", argv[1]);
  for (int i = 2; i < argc; i += 2) {
    if (idmap_mount(userns, argv[i], argv[i + 1]) != 0) return 1;
  }
  return 0;
}
