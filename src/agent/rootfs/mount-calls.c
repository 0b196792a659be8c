// The agent's mount checks and unmounts as system calls, where it read /proc/self/mountinfo
// and ran umount(8). Both of those cost time in proportion to every mount on the host: with a
// thousand sandboxes the table holds thousands of lines, and each create and teardown read it
// several times and started a umount for each of its mounts. The calls run on libuv's thread
// pool, as Node's own fs calls do: an unmount can wait on the filesystem it flushes.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

typedef enum { IS_MOUNT_ROOT, UNMOUNT } mount_call_kind;

typedef struct {
  mount_call_kind kind;
  napi_async_work work;
  napi_deferred deferred;
  char *path;
  int error;
  // IS_MOUNT_ROOT: whether the kernel reports the attribute, and its value.
  bool supported;
  bool root;
} mount_call;

static void run_call(napi_env env, void *data) {
  (void)env;
  mount_call *call = data;
  if (call->kind == UNMOUNT) {
    call->error = umount2(call->path, UMOUNT_NOFOLLOW) == 0 ? 0 : errno;
    return;
  }
  struct statx stx;
  call->error = statx(AT_FDCWD, call->path, AT_NO_AUTOMOUNT, 0, &stx) == 0 ? 0 : errno;
  call->supported = call->error != 0 || (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0;
  call->root = call->error == 0 && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

// Rejects with an Error whose `code` is the errno's name where there is one, as Node's fs does.
static void reject(napi_env env, mount_call *call, const char *message, const char *code) {
  napi_value text, error, code_value;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, NULL, text, &error);
  if (code != NULL && napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value) == napi_ok) {
    napi_set_named_property(env, error, "code", code_value);
  }
  napi_reject_deferred(env, call->deferred, error);
}

static const char *errno_name(int error) {
  switch (error) {
    case EBUSY: return "EBUSY";
    case EINVAL: return "EINVAL";
    case ENOENT: return "ENOENT";
    case ENOTDIR: return "ENOTDIR";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    default: return NULL;
  }
}

static void settle(napi_env env, napi_status status, void *data) {
  mount_call *call = data;
  char message[320];
  napi_value value;
  const char *name = call->kind == UNMOUNT ? "umount2" : "statx";
  if (status != napi_ok) {
    reject(env, call, "the mount call was cancelled", NULL);
  } else if (call->kind == IS_MOUNT_ROOT && (call->error == ENOENT || call->error == ENOTDIR)) {
    // Nothing is mounted where nothing is.
    napi_get_boolean(env, false, &value);
    napi_resolve_deferred(env, call->deferred, value);
  } else if (call->error != 0) {
    snprintf(message, sizeof message, "%s %s: %s", name, call->path, strerror(call->error));
    reject(env, call, message, errno_name(call->error));
  } else if (call->kind == IS_MOUNT_ROOT && !call->supported) {
    // No caller may read "not mounted" from a kernel that does not say.
    reject(env, call, "statx: this kernel does not report STATX_ATTR_MOUNT_ROOT", NULL);
  } else {
    if (call->kind == IS_MOUNT_ROOT) napi_get_boolean(env, call->root, &value);
    else napi_get_undefined(env, &value);
    napi_resolve_deferred(env, call->deferred, value);
  }
  napi_delete_async_work(env, call->work);
  free(call->path);
  free(call);
}

// Queues `kind` on `path` (the one argument) and returns its promise.
static napi_value queue_call(napi_env env, napi_callback_info info, mount_call_kind kind) {
  size_t argc = 1;
  napi_value argv[1];
  size_t length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_string_utf8(env, argv[0], NULL, 0, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected (path) as a string");
    return NULL;
  }
  mount_call *call = calloc(1, sizeof *call);
  char *path = malloc(length + 1);
  napi_value promise, name;
  if (call != NULL) {
    call->kind = kind;
    call->path = path;
  }
  if (call == NULL || path == NULL ||
      napi_get_value_string_utf8(env, argv[0], path, length + 1, &length) != napi_ok ||
      napi_create_promise(env, &call->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "mountCall", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, run_call, settle, call, &call->work) != napi_ok ||
      napi_queue_async_work(env, call->work) != napi_ok) {
    free(path);
    free(call);
    napi_throw_error(env, NULL, "could not queue the mount call");
    return NULL;
  }
  return promise;
}

// isMountRoot(path): a promise of whether `path` is the root of a mount (statx's
// STATX_ATTR_MOUNT_ROOT, Linux 5.8), false where the path does not exist. Follows symlinks in
// the path, as mount(8) does with its target.
static napi_value is_mount_root(napi_env env, napi_callback_info info) {
  return queue_call(env, info, IS_MOUNT_ROOT);
}

// unmount(path): umount2 of the mount on top at `path`, without following a symlink there;
// rejects with the errno's `code` (EBUSY while a process still uses it, EINVAL where nothing is
// mounted).
static napi_value unmount(napi_env env, napi_callback_info info) {
  return queue_call(env, info, UNMOUNT);
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "isMountRoot", NAPI_AUTO_LENGTH, is_mount_root, NULL, &fn) !=
          napi_ok ||
      napi_set_named_property(env, exports, "isMountRoot", fn) != napi_ok ||
      napi_create_function(env, "unmount", NAPI_AUTO_LENGTH, unmount, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "unmount", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}
