// idmapped-overlay USERNS TARGET OPTIONS LAYER STAGE [LAYER STAGE]...
//
// Mounts an overlay at TARGET whose lower layers are idmapped through the user namespace file
// USERNS: each LAYER directory is mounted read-only at its STAGE directory with the
// namespace's ID map (mount_setattr(2), MOUNT_ATTR_IDMAP; a file of host ID 0 is then the
// namespace's root), the overlay is mounted with OPTIONS (whose lowerdir names the STAGEs),
// and the STAGE mounts are detached again: the overlay holds its own reference to its layers.
// bookworm's mount(8) lacks `X-mount.idmap` and Node cannot make these calls; they go through
// syscall(2) because glibc 2.36 wraps none of the new mount API. One process does it all,
// where mount(8) alone was one spawn already (idmapped-overlay.ts).
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
  fprintf(stderr, "idmapped-overlay: %s %s: %s\n", call, path, strerror(errno));
  return 1;
}

static int idmap_mount(int userns, const char *layer, const char *stage) {
  // A detached copy of the layer's mount tree: its attributes change without touching LAYER.
  int tree = (int)syscall(SYS_open_tree, AT_FDCWD, layer, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0) return fail("open_tree", layer);
  struct mount_attr attr = {
      .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY,
      .userns_fd = (uint64_t)userns,
  };
  int status = 0;
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    int error = errno;
    status = fail("mount_setattr", layer);
    // Measured on 6.18: an overlayfs layer directory gives EINVAL; so do 9p, NFS, and tmpfs
    // before Linux 6.3. ext4, XFS and btrfs take idmapped mounts.
    if (error == EINVAL)
      fputs("idmapped-overlay: the layer's file system may not support idmapped mounts\n", stderr);
  }
  else if (syscall(SYS_move_mount, tree, "", AT_FDCWD, stage, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    status = fail("move_mount to", stage);
  close(tree);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 6 || argc % 2 != 0) {
    fputs("usage: idmapped-overlay USERNS TARGET OPTIONS LAYER STAGE [LAYER STAGE]...\n", stderr);
    return 2;
  }
  const char *target = argv[2], *options = argv[3];
  int userns = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (userns < 0) return fail("open", argv[1]);
  int status = 0, mounted = 0;
  for (int i = 4; i < argc && status == 0; i += 2) {
    status = idmap_mount(userns, argv[i], argv[i + 1]);
    if (status == 0) mounted += 1;
  }
  if (status == 0 && mount("overlay", target, "overlay", 0, options) != 0)
    status = fail("mount overlay at", target);
  for (int layer = 0; layer < mounted; layer++) {
    const char *stage = argv[5 + 2 * layer];
    if (umount2(stage, MNT_DETACH) != 0 && status == 0) status = fail("umount", stage);
  }
  return status;
}
