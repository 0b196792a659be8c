// envd's spawn of a piped user process (pipe-process.ts). Node's child_process.spawn forks
// envd: the kernel copies its page tables, ~4 ms with envd's ~50 MB mapped, while the event
// loop waits for the child's exec. posix_spawn clones with CLONE_VM|CLONE_VFORK and copies
// nothing, ~0.3 ms whatever envd's size. The exit comes through a pidfd that libuv polls, or
// a thread blocked in waitid: nothing else in envd waits for these children, so they stay
// unreaped until then.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "../napi-errno.h"
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
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

static void close_all(int *fds, int count) {
  for (int i = 0; i < count; i++) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

// The child's stdio: [stdin read end, stdin write end, stdout r, w, stderr r, w]. Without a
// stdin pipe the child reads /dev/null and the write end stays -1.
static int open_stdio(int fds[6], bool stdin_pipe) {
  if (stdin_pipe) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  } else {
    fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fds[0] < 0) return -1;
  }
  if (pipe2(fds + 2, O_CLOEXEC) != 0 || pipe2(fds + 4, O_CLOEXEC) != 0) return -1;
  return 0;
}

// spawn(file, argv, envp, cwd, stdinPipe) -> [pid, stdin write fd or -1, stdout fd, stderr fd].
// The child leads a new session, starts with every signal at its default disposition and none
// blocked (node ignores SIGPIPE, which exec would otherwise pass on), and has only fds 0-2 of
// envd's: every descriptor Node opens is close-on-exec.
static napi_value spawn_process(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  bool stdin_pipe = false;
  string_list args = {0}, envp = {0};
  char *file = NULL, *cwd = NULL;
  int fds[6] = {-1, -1, -1, -1, -1, -1};
  napi_value result = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5 ||
      (file = string_arg(env, argv[0])) == NULL || list_arg(env, argv[1], &args) != 0 ||
      list_arg(env, argv[2], &envp) != 0 || (cwd = string_arg(env, argv[3])) == NULL ||
      napi_get_value_bool(env, argv[4], &stdin_pipe) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected (file, argv[], envp[], cwd, stdinPipe)");
    goto done;
  }
  if (open_stdio(fds, stdin_pipe) != 0) {
    throw_errno(env, "pipe2");
    goto done;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_adddup2(&actions, fds[3], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[5], 2);
  posix_spawn_file_actions_addchdir_np(&actions, cwd);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  pid_t pid;
  int error = posix_spawn(&pid, file, &actions, &attr, args.items, envp.items);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    // Named after the program, as Node's spawn errors are: which one was missing matters.
    char message[PATH_MAX + 64];
    snprintf(message, sizeof message, "spawn %s: %s", file, strerror(error));
    napi_throw_error(env, NULL, message);
    goto done;
  }
  // The child's ends belong to the child now.
  close_all(fds, 1);
  close_all(fds + 3, 1);
  close_all(fds + 5, 1);
  int values[4] = {pid, fds[1], fds[2], fds[4]};
  napi_create_array_with_length(env, 4, &result);
  for (uint32_t i = 0; i < 4; i++) {
    napi_value number;
    napi_create_int32(env, values[i], &number);
    napi_set_element(env, result, i, number);
  }
  // Handed over to JavaScript, which closes them.
  fds[1] = fds[2] = fds[4] = -1;
done:
  close_all(fds, 6);
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
