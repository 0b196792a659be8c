// envd's launcher under `sandbar serve --share-envd-memory`. Usage:
//   share-memory PROGRAM [ARG...]
// It marks its memory mergeable by the kernel's KSM (PR_SET_MEMORY_MERGE, which exec keeps)
// and turns off address-space randomisation (ADDR_NO_RANDOMIZE), then execs PROGRAM. envds
// started alike, with V8 in its predictable mode (toolbox.ts), then lay out their heaps alike,
// and KSM shares the pages they have in common: with randomised layouts it found almost
// nothing to share. run-as undoes both for every user process. Static: it runs in any rootfs.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: share-memory PROGRAM [ARG...]\n");
    return 125;
  }
  // Where the kernel refuses (before 6.4, or gVisor's), envd runs as without the flag:
  // unshared, not broken. serve checks the host's kernel at start (memory-merging.ts).
  if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0) {
    fprintf(stderr, "share-memory: KSM merging not available: %s\n", strerror(errno));
  } else if (personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) == -1) {
    fprintf(stderr, "share-memory: cannot fix the address layout: %s\n", strerror(errno));
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "share-memory: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
