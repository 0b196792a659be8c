// Process spawn for envd's user processes and the agent's host tools. Node's
// child_process.spawn forks the calling process: the kernel copies its page tables, ~4 ms for
// envd's ~50 MB and more for `sandbar serve`, while the event loop waits for the child's exec.
// posix_spawn clones with CLONE_VM|CLONE_VFORK and copies nothing, ~0.3 ms whatever the
// caller's size. The exit comes through a pidfd that libuv polls, or a thread blocked in
// waitid: nothing else in the process waits for these children, so they stay unreaped until
// then (libuv reaps only the children it spawned).
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "../envd/napi-errno.h"
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

// Each string of an array argument, NULL-terminated, and the whole list freed at once.
typedef struct {
  char **items;
  uint32_t count;
} string_list;

static void free_list(string_list *list) {
  if (list->items == NULL) return;
  for (uint32_t i = 0; i < list->count; i++) free(list->items[i]);
  free(list->items);
  list->items = NULL;
}

static char *string_arg(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *text = malloc(length + 1);
  if (text == NULL) return NULL;
  if (napi_get_value_string_utf8(env, value, text, length + 1, &length) != napi_ok) {
    free(text);
    return NULL;
  }
  return text;
}

static int list_arg(napi_env env, napi_value value, string_list *list) {
  bool is_array = false;
  uint32_t count;
  if (napi_is_array(env, value, &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, value, &count) != napi_ok) {
    return -1;
  }
  list->items = calloc(count + 1, sizeof(char *));
  list->count = 0;
  if (list->items == NULL) return -1;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    if (napi_get_element(env, value, i, &element) != napi_ok) return -1;
    list->items[i] = string_arg(env, element);
    if (list->items[i] == NULL) return -1;
    list->count = i + 1;
  }
  return 0;
}

// What a child gets at one descriptor slot (0, 1, 2, 3, ...).
#define STDIO_PIPE (-1)
#define STDIO_IGNORE (-2)
#define MAX_SLOTS 16

// The child's end and the parent's end of each slot: a pipe's two ends, /dev/null, or a copy
// of a descriptor of the caller's (the parent end then stays -1). The child ends are this
// call's own, above MAX_SLOTS.
typedef struct {
  int child[MAX_SLOTS];
  int parent[MAX_SLOTS];
  uint32_t count;
} stdio_slots;

static void close_slots(stdio_slots *slots) {
  for (uint32_t i = 0; i < slots->count; i++) {
    if (slots->child[i] >= 0) close(slots->child[i]);
    if (slots->parent[i] >= 0) close(slots->parent[i]);
    slots->child[i] = slots->parent[i] = -1;
  }
}

// A slot's source moved above every slot number, so that placing one slot never overwrites
// the source of another (a caller's fd 1 given as slot 3 while slot 1 gets a pipe, say).
static int above_slots(int fd) {
  if (fd >= MAX_SLOTS) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, MAX_SLOTS);
  close(fd);
  return moved;
}

// Slot 0 reads from its pipe, every other slot writes to its own.
static int open_slots(napi_env env, napi_value value, stdio_slots *slots) {
  bool is_array = false;
  uint32_t count;
  if (napi_is_array(env, value, &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, value, &count) != napi_ok || count < 3 || count > MAX_SLOTS) {
    return -1;
  }
  slots->count = count;
  for (uint32_t i = 0; i < count; i++) slots->child[i] = slots->parent[i] = -1;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    int32_t kind;
    if (napi_get_element(env, value, i, &element) != napi_ok ||
        napi_get_value_int32(env, element, &kind) != napi_ok || kind < STDIO_IGNORE) {
      return -1;
    }
    if (kind == STDIO_PIPE) {
      int ends[2];
      if (pipe2(ends, O_CLOEXEC) != 0) return -2;
      slots->child[i] = above_slots(i == 0 ? ends[0] : ends[1]);
      slots->parent[i] = i == 0 ? ends[1] : ends[0];
    } else if (kind == STDIO_IGNORE) {
      int null = open("/dev/null", i == 0 ? O_RDONLY | O_CLOEXEC : O_WRONLY | O_CLOEXEC);
      slots->child[i] = null < 0 ? -1 : above_slots(null);
    } else {
      // The caller keeps its descriptor; the child gets a duplicate.
      slots->child[i] = fcntl(kind, F_DUPFD_CLOEXEC, MAX_SLOTS);
    }
    if (slots->child[i] < 0) return -2;
  }
  return 0;
}

// spawn(file, argv, envp, cwd, stdio, newSession) -> [pid, parent end of each stdio slot].
// stdio[i] is -1 for a pipe, -2 for /dev/null, or a descriptor the child gets as fd i. A file
// without a slash is searched on envd's (or the agent's) PATH. The child starts with every
// signal at its default disposition and none blocked (Node ignores SIGPIPE, which exec would
// pass on), and has only its slots of the caller's descriptors: every one Node opens is
// close-on-exec. With newSession it leads a session of its own, so a signal reaches its group.
static napi_value spawn_process(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6], result = NULL;
  bool new_session = false;
  napi_valuetype cwd_type;
  string_list args = {0}, envp = {0};
  char *file = NULL, *cwd = NULL;
  stdio_slots slots = {.count = 0};
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 6 ||
      (file = string_arg(env, argv[0])) == NULL || list_arg(env, argv[1], &args) != 0 ||
      list_arg(env, argv[2], &envp) != 0 || napi_typeof(env, argv[3], &cwd_type) != napi_ok ||
      (cwd_type != napi_null && (cwd = string_arg(env, argv[3])) == NULL) ||
      napi_get_value_bool(env, argv[5], &new_session) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected (file, argv[], envp[], cwd, stdio[], newSession)");
    goto done;
  }
  int opened = open_slots(env, argv[4], &slots);
  if (opened == -1) {
    napi_throw_type_error(env, NULL, "stdio must be 3 to 16 descriptors, -1 (pipe) or -2 (null)");
    goto done;
  }
  if (opened == -2) {
    throw_errno(env, "opening the child's descriptors");
    goto done;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  for (uint32_t i = 0; i < slots.count; i++) {
    posix_spawn_file_actions_adddup2(&actions, slots.child[i], (int)i);
  }
  if (cwd != NULL) posix_spawn_file_actions_addchdir_np(&actions, cwd);
  posix_spawnattr_setflags(&attr, (new_session ? POSIX_SPAWN_SETSID : 0) |
                                      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  pid_t pid;
  int error = strchr(file, '/') == NULL
                  ? posix_spawnp(&pid, file, &actions, &attr, args.items, envp.items)
                  : posix_spawn(&pid, file, &actions, &attr, args.items, envp.items);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    // Named after the program, as Node's spawn errors are: which one was missing matters.
    char message[PATH_MAX + 64];
    snprintf(message, sizeof message, "spawn %s: %s", file, strerror(error));
    napi_throw_error(env, NULL, message);
    goto done;
  }
  napi_value number;
  napi_create_array_with_length(env, slots.count + 1, &result);
  napi_create_int32(env, pid, &number);
  napi_set_element(env, result, 0, number);
  for (uint32_t i = 0; i < slots.count; i++) {
    napi_create_int32(env, slots.parent[i], &number);
    napi_set_element(env, result, i + 1, number);
    // Handed over to JavaScript, which closes it.
    slots.parent[i] = -1;
  }
done:
  close_slots(&slots);
  free(file);
  free(cwd);
  free_list(&args);
  free_list(&envp);
  return result;
}

// One child's exit on its way to JavaScript: a pidfd that libuv polls, or, where the kernel has
// no pollable pidfd (gVisor), a thread blocked in waitid that wakes the loop.
typedef struct {
  union {
    uv_poll_t poll;
    uv_async_t async;
  } handle;
  int pidfd;
  pid_t pid;
  siginfo_t info;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
} exit_watch;

static void free_watch(uv_handle_t *handle) {
  exit_watch *watch = handle->data;
  if (watch->pidfd >= 0) close(watch->pidfd);
  free(watch);
}

// Calls back with (code, signal), one of them null, and lets the watch go.
static void deliver_exit(exit_watch *watch) {
  napi_env env = watch->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, receiver, args[2];
  napi_get_reference_value(env, watch->callback, &callback);
  napi_get_global(env, &receiver);
  napi_get_null(env, &args[0]);
  napi_get_null(env, &args[1]);
  napi_create_int32(env, watch->info.si_status, &args[watch->info.si_code == CLD_EXITED ? 0 : 1]);
  napi_make_callback(env, watch->context, receiver, callback, 2, args, NULL);
  napi_close_handle_scope(env, scope);
  napi_async_destroy(env, watch->context);
  napi_delete_reference(env, watch->callback);
  uv_close((uv_handle_t *)&watch->handle, free_watch);
}

// The pidfd is readable once the child has ended: reap it.
static void on_pidfd_ready(uv_poll_t *poll, int status, int events) {
  (void)status;
  (void)events;
  exit_watch *watch = poll->data;
  if (waitid(P_PID, watch->pid, &watch->info, WEXITED | WNOHANG) != 0 || watch->info.si_pid == 0) {
    return;
  }
  uv_poll_stop(poll);
  deliver_exit(watch);
}

static void on_reaped(uv_async_t *async) { deliver_exit(async->data); }

static void *reap_blocking(void *arg) {
  exit_watch *watch = arg;
  while (waitid(P_PID, watch->pid, &watch->info, WEXITED) != 0 && errno == EINTR) {
  }
  uv_async_send(&watch->handle.async);
  return NULL;
}

static int watch_pidfd(uv_loop_t *loop, exit_watch *watch) {
  watch->pidfd = (int)syscall(SYS_pidfd_open, watch->pid, 0);
  if (watch->pidfd < 0) return -1;
  watch->handle.poll.data = watch;
  if (uv_poll_init(loop, &watch->handle.poll, watch->pidfd) != 0) {
    close(watch->pidfd);
    watch->pidfd = -1;
    return -1;
  }
  if (uv_poll_start(&watch->handle.poll, UV_READABLE, on_pidfd_ready) != 0) {
    // Closing frees the watch: the caller must not fall back to another way.
    uv_close((uv_handle_t *)&watch->handle.poll, free_watch);
    return -2;
  }
  return 0;
}

static int watch_thread(uv_loop_t *loop, exit_watch *watch) {
  watch->handle.async.data = watch;
  if (uv_async_init(loop, &watch->handle.async, on_reaped) != 0) return -1;
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  int error = pthread_create(&thread, &attr, reap_blocking, watch);
  pthread_attr_destroy(&attr);
  if (error != 0) {
    uv_close((uv_handle_t *)&watch->handle.async, free_watch);
    return -2;
  }
  return 0;
}

// watchExit(pid, callback): calls callback(code, signal) once the child has ended, reaped.
static napi_value watch_exit(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], name;
  int32_t pid;
  napi_valuetype type;
  uv_loop_t *loop;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
      napi_get_value_int32(env, argv[0], &pid) != napi_ok ||
      napi_typeof(env, argv[1], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, NULL, "expected (pid, callback)");
    return NULL;
  }
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
    napi_throw_error(env, NULL, "no event loop");
    return NULL;
  }
  exit_watch *watch = calloc(1, sizeof *watch);
  if (watch == NULL) return throw_errno(env, "calloc");
  watch->pid = pid;
  watch->pidfd = -1;
  watch->env = env;
  // References first: once watching, the exit may be delivered at the loop's next turn.
  napi_create_reference(env, argv[1], 1, &watch->callback);
  napi_create_string_utf8(env, "sandbar:process-exit", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &watch->context);
  int watching = watch_pidfd(loop, watch);
  if (watching == -1) watching = watch_thread(loop, watch);
  if (watching == 0) return NULL;
  napi_async_destroy(env, watch->context);
  napi_delete_reference(env, watch->callback);
  if (watching == -1) free(watch);
  napi_throw_error(env, NULL, "cannot watch the process for its exit");
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value spawn_fn, watch_fn;
  if (napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, spawn_process, NULL, &spawn_fn) !=
          napi_ok ||
      napi_create_function(env, "watchExit", NAPI_AUTO_LENGTH, watch_exit, NULL, &watch_fn) !=
          napi_ok ||
      napi_set_named_property(env, exports, "spawn", spawn_fn) != napi_ok ||
      napi_set_named_property(env, exports, "watchExit", watch_fn) != napi_ok) {
    return NULL;
  }
  return exports;
}
