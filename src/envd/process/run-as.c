// envd's run-as: starts every user process (spawn-command.ts). Usage:
//   run-as UID GID GROUPS -- PROGRAM [ARG...]
// GROUPS is a comma-separated list of supplementary group IDs, empty for none. It sets the
// groups, the real, effective and saved gid and uid, raises its own OOM score so the kernel
// kills user processes before envd (wire contract §3.5: E2B's envd does it in a shell
// preamble), undoes what share-memory.c did to envd (user code keeps a randomised layout and
// stays out of KSM, whose merges another sandbox could time), and execs PROGRAM, searched on
// PATH. Static: it runs in any rootfs, with no loader or shell in between, where util-linux's
// setpriv needed the toolbox's loader and a `/bin/sh -c` preamble, two more programs to load
// on every command.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// Exit statuses of a start that failed before the program ran: the shell's for a program not
// found or not executable (what the preamble reported), and one of its own for bad usage.
#define EXIT_USAGE 125
#define EXIT_CANNOT_EXECUTE 126
#define EXIT_NOT_FOUND 127

#define MAX_GROUPS 256

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

// The kernel's sigaction (glibc's has another layout, and its sigaction refuses the two
// signals it keeps for itself).
struct kernel_sigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)(void);
  unsigned long mask;
};

// Every signal at its default disposition, as a program started from a shell has it. envd
// spawns run-as with posix_spawn, whose child keeps glibc's internal signals (32 and 33)
// ignored, a disposition exec would pass on to the command.
static void default_signals(void) {
  struct kernel_sigaction action = {.handler = SIG_DFL};
  for (int sig = 1; sig <= 64; sig++) {
    if (sig != SIGKILL && sig != SIGSTOP) {
      syscall(SYS_rt_sigaction, sig, &action, NULL, sizeof action.mask);
    }
  }
}

static int parse_id(const char *text, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value >= UINT_MAX) return -1;
  *out = value;
  return 0;
}

static int parse_groups(char *list, gid_t *groups, size_t *count) {
  *count = 0;
  if (*list == '\0') return 0;
  for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
    unsigned long gid;
    if (*count == MAX_GROUPS || parse_id(item, &gid) != 0) return -1;
    groups[(*count)++] = (gid_t)gid;
  }
  return 0;
}

int main(int argc, char **argv) {
  unsigned long uid, gid;
  gid_t groups[MAX_GROUPS];
  size_t count;
  if (argc < 6 || strcmp(argv[4], "--") != 0 || parse_id(argv[1], &uid) != 0 ||
      parse_id(argv[2], &gid) != 0 || parse_groups(argv[3], groups, &count) != 0) {
    fprintf(stderr, "usage: run-as UID GID GROUPS -- PROGRAM [ARG...]\n");
    return EXIT_USAGE;
  }
  // Before the switch: a process that changed its uid may not open its own /proc files
  // until it execs. A read-only /proc must not stop the command.
  int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (write(fd, "100", 3) != 3) {
      // The command runs with the score it has.
    }
    close(fd);
  }
  // Groups and gid first: once the uid is the user's, they can no longer change.
  if (setgroups(count, groups) != 0 || setresgid(gid, gid, gid) != 0 ||
      setresuid(uid, uid, uid) != 0) {
    fprintf(stderr, "run-as: cannot switch to %lu:%lu: %s\n", uid, gid, strerror(errno));
    return EXIT_USAGE;
  }
  default_signals();
  // Both fail only where share-memory could not have set them (a kernel before 6.4).
  prctl(PR_SET_MEMORY_MERGE, 0, 0, 0, 0);
  personality(personality(0xffffffff) & ~ADDR_NO_RANDOMIZE);
  execvp(argv[5], argv + 5);
  int error = errno;
  fprintf(stderr, "sh: 1: exec: %s: %s\n", argv[5],
          error == ENOENT ? "not found" : strerror(error));
  return error == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
}
