// user-namespace OWNER HOST_ID SIZE USERNS_FILE [NETNS_FILE]
//
// Makes a sandbox's user namespace owned by host UID OWNER, with NETNS_FILE a network
// namespace inside it too (one unshare(2), so the user namespace owns it), maps the
// namespace's IDs 0…SIZE-1 to HOST_ID…, and pins both at their files (bind mounts of their
// nsfs files; the files must exist). A child running as OWNER, with no groups and no
// capabilities, unshares; this process (root) writes the child's ID maps, which as a
// privileged writer may map any range and leaves setgroups allowed (sudo inside needs it),
// and binds the namespaces; the child then exits.
//
// One exec where setpriv, unshare, sleep and two mount(8) were five, and no polling for the
// child to have unshared (user-namespace.ts).
//
// Exit status: 0 pinned, 1 a call failed (named on stderr; nothing stays pinned), 2 bad usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

// What the child reports once it has tried: the step that failed (0: none) and its errno.
struct outcome {
  int step;
  int error;
};

static const char *const STEPS[] = {"", "setgroups", "setresgid", "setresuid", "unshare"};

static int fail(const char *call, const char *what) {
  fprintf(stderr, "user-namespace: %s %s: %s\n", call, what, strerror(errno));
  return 1;
}

static int parse_id(const char *text, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (errno != 0 || *text == '\0' || *end != '\0' || value > 0xffffffffUL) return -1;
  *out = value;
  return 0;
}

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t length = strlen(text);
  ssize_t written = write(fd, text, length);
  int saved = errno;
  close(fd);
  errno = saved;
  return written == (ssize_t)length ? 0 : -1;
}

// Runs in the child: drops to OWNER and unshares, reports, then waits for `release` to close.
static void unshare_as_owner(uid_t owner, int flags, int report, int release) {
  struct outcome outcome = {0, 0};
  if (setgroups(0, NULL) != 0)
    outcome.step = 1;
  else if (setresgid(owner, owner, owner) != 0)
    outcome.step = 2;
  else if (setresuid(owner, owner, owner) != 0)
    outcome.step = 3;
  else if (unshare(flags) != 0)
    outcome.step = 4;
  if (outcome.step != 0) outcome.error = errno;
  if (write(report, &outcome, sizeof outcome) != sizeof outcome) _exit(1);
  char byte;
  // Returns at end of file: the parent closed its end, done with the namespaces.
  while (read(release, &byte, 1) < 0 && errno == EINTR) {
  }
  _exit(0);
}

static int map_and_pin(pid_t child, unsigned long host_id, unsigned long size,
                       const char *userns_file, const char *netns_file) {
  char map[64];
  char path[64];
  snprintf(map, sizeof map, "0 %lu %lu\n", host_id, size);
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "/proc/%d/%s", (int)child, i == 0 ? "uid_map" : "gid_map");
    if (write_text(path, map) != 0) return fail("write", path);
  }
  snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
  if (mount(path, userns_file, NULL, MS_BIND, NULL) != 0) return fail("bind", userns_file);
  if (netns_file == NULL) return 0;
  snprintf(path, sizeof path, "/proc/%d/ns/net", (int)child);
  if (mount(path, netns_file, NULL, MS_BIND, NULL) != 0) {
    int status = fail("bind", netns_file);
    umount2(userns_file, MNT_DETACH);
    return status;
  }
  return 0;
}

int main(int argc, char **argv) {
  unsigned long owner, host_id, size;
  if ((argc != 5 && argc != 6) || parse_id(argv[1], &owner) != 0 ||
      parse_id(argv[2], &host_id) != 0 || parse_id(argv[3], &size) != 0) {
    fprintf(stderr, "usage: user-namespace OWNER HOST_ID SIZE USERNS_FILE [NETNS_FILE]\n");
    return 2;
  }
  const char *netns_file = argc == 6 ? argv[5] : NULL;
  int report[2], release[2];
  if (pipe2(report, O_CLOEXEC) != 0 || pipe2(release, O_CLOEXEC) != 0) return fail("pipe2", "");
  pid_t child = fork();
  if (child < 0) return fail("fork", "");
  if (child == 0) {
    close(report[0]);
    close(release[1]);
    unshare_as_owner((uid_t)owner, CLONE_NEWUSER | (netns_file == NULL ? 0 : CLONE_NEWNET),
                     report[1], release[0]);
  }
  close(report[1]);
  close(release[0]);
  struct outcome outcome;
  int status;
  if (read(report[0], &outcome, sizeof outcome) != sizeof outcome) {
    fprintf(stderr, "user-namespace: the child ended before it unshared\n");
    status = 1;
  } else if (outcome.step != 0) {
    errno = outcome.error;
    status = fail(STEPS[outcome.step], "as the owner");
  } else {
    status = map_and_pin(child, host_id, size, argv[4], netns_file);
  }
  close(release[1]);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
  }
  return status;
}
