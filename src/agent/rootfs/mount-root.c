// Whether a path is the root of a mount, from statx's STATX_ATTR_MOUNT_ROOT (Linux 5.8): one
// system call where reading /proc/self/mountinfo costs time in proportion to every mount on the
// host. With a thousand sandboxes that table holds thousands of lines, and a sandbox's create
// and teardown asked it several times each.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "../../envd/napi-errno.h"
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdlib.h>
#include <sys/stat.h>

// isMountRoot(path): true at a mount's root, false where nothing is mounted or the path does
// not exist. Follows symlinks in the path, as mount(8) does with its target. Throws when the
// kernel does not report the attribute, so that no caller reads "not mounted" from silence.
static napi_value is_mount_root(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  size_t length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_string_utf8(env, argv[0], NULL, 0, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected (path) as a string");
    return NULL;
  }
  char *path = malloc(length + 1);
  if (path == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[0], path, length + 1, &length);
  struct statx stx;
  int failed = statx(AT_FDCWD, path, AT_NO_AUTOMOUNT, 0, &stx);
  int error = errno;
  free(path);
  bool root;
  if (failed != 0) {
    if (error != ENOENT && error != ENOTDIR) {
      errno = error;
      return throw_errno(env, "statx");
    }
    root = false;
  } else if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0) {
    napi_throw_error(env, NULL, "statx: this kernel does not report STATX_ATTR_MOUNT_ROOT");
    return NULL;
  } else {
    root = (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  }
  napi_value result;
  napi_get_boolean(env, root, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "isMountRoot", NAPI_AUTO_LENGTH, is_mount_root, NULL, &fn) !=
          napi_ok ||
      napi_set_named_property(env, exports, "isMountRoot", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}
