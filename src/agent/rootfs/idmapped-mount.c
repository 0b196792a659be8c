// idmapped-mount overlay USERNS TARGET OPTIONS LAYER STAGE [LAYER STAGE]...
// idmapped-mount bind USERNS SOURCE STAGE [SOURCE STAGE]...
//
// Mounts directories idmapped through the user namespace file USERNS (mount_setattr(2),
// MOUNT_ATTR_IDMAP: a file of host ID 0 is then the namespace's root, and what the namespace's
// IDs write is stored as IDs 0…size-1).
//
// overlay: each LAYER directory is mounted read-only at its STAGE directory, an overlay is
// mounted at TARGET with OPTIONS (whose lowerdir names the STAGEs), and the STAGE mounts are
// detached again: the overlay holds its own reference to its layers. A sandbox's root.
//
// bind: each SOURCE directory is mounted read-write, nodev and nosuid at its STAGE directory,
// and stays there for a runtime to bind into a container (a bind copies the idmap). A volume.
//
// bookworm's mount(8) lacks `X-mount.idmap` and Node cannot make these calls; they go through
// syscall(2) because glibc 2.36 wraps none of the new mount API. One process does it all,
// where mount(8) alone was one spawn already (idmapped-overlay.ts, volumes/volume-stage.ts).
//
// Exit status: 0 mounted, 1 a call failed (named on stderr; every STAGE is detached again),
// 2 bad usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail(const char *call, const char *path) {
  fprintf(stderr, "idmapped-mount: %s %s: %s\n", call, path, strerror(errno));
  return 1;
}

static int idmap_mount(int userns, uint64_t flags, const char *source, const char *stage) {
  // A detached copy of the source's mount (not its submounts): its attributes change without
  // touching SOURCE, and nothing mounted below SOURCE comes along.
  int tree = (int)syscall(SYS_open_tree, AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0) return fail("open_tree", source);
  // Private: a copy of a shared mount (systemd makes every mount shared) joins its peer group,
  // and so would every bind of the stage, receiving what the host mounts below SOURCE.
  struct mount_attr attr = {
      .attr_set = MOUNT_ATTR_IDMAP | flags,
      .propagation = MS_PRIVATE,
      .userns_fd = (uint64_t)userns,
  };
  int status = 0;
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    int error = errno;
    status = fail("mount_setattr", source);
    // Measured on 6.18: an overlayfs layer directory gives EINVAL; so do 9p, NFS, and tmpfs
    // before Linux 6.3. ext4, XFS and btrfs take idmapped mounts.
    if (error == EINVAL)
      fputs("idmapped-mount: the file system may not support idmapped mounts\n", stderr);
  }
  else if (syscall(SYS_move_mount, tree, "", AT_FDCWD, stage, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    status = fail("move_mount to", stage);
  close(tree);
  return status;
}

// Mounts each (source, stage) pair among the `count` arguments of `pairs` with `flags`,
// stopping at the first failure; `mounted` counts the pairs mounted.
static int idmap_pairs(int userns, uint64_t flags, char **pairs, int count, int *mounted) {
  int status = 0;
  for (int i = 0; i < count && status == 0; i += 2) {
    status = idmap_mount(userns, flags, pairs[i], pairs[i + 1]);
    if (status == 0) *mounted += 1;
  }
  return status;
}

static int detach_stages(char **pairs, int mounted, int status) {
  for (int i = 0; i < mounted; i++) {
    const char *stage = pairs[2 * i + 1];
    if (umount2(stage, MNT_DETACH) != 0 && status == 0) status = fail("umount", stage);
  }
  return status;
}

static int usage(void) {
  fputs("usage: idmapped-mount overlay USERNS TARGET OPTIONS LAYER STAGE [LAYER STAGE]...\n"
        "       idmapped-mount bind USERNS SOURCE STAGE [SOURCE STAGE]...\n",
        stderr);
  return 2;
}

int main(int argc, char **argv) {
  int overlay = argc > 1 && strcmp(argv[1], "overlay") == 0;
  int bind = argc > 1 && strcmp(argv[1], "bind") == 0;
  // The pairs start after the mode and USERNS, and for overlay after TARGET and OPTIONS too.
  int first = overlay ? 5 : 3;
  if (!(overlay || bind) || argc < first + 2 || (argc - first) % 2 != 0) return usage();
  int userns = open(argv[2], O_RDONLY | O_CLOEXEC);
  if (userns < 0) return fail("open", argv[2]);
  char **pairs = argv + first;
  int count = argc - first, mounted = 0;
  if (bind) {
    // nodev and nosuid: one sandbox must not plant a device or a setuid program for another.
    int status = idmap_pairs(userns, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID, pairs, count, &mounted);
    return status == 0 ? 0 : detach_stages(pairs, mounted, status);
  }
  const char *target = argv[3], *options = argv[4];
  int status = idmap_pairs(userns, MOUNT_ATTR_RDONLY, pairs, count, &mounted);
  if (status == 0 && mount("overlay", target, "overlay", 0, options) != 0)
    status = fail("mount overlay at", target);
  return detach_stages(pairs, mounted, status);
}
