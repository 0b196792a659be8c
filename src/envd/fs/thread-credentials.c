// envd's per-thread credential switch (as-user.ts). The kernel keeps credentials per thread;
// glibc's setgroups/setegid/seteuid, which Node's process.* calls use, make them per process
// by signalling every thread and waiting for each to switch (nptl's setxid), ~0.15 ms a call
// with node's ten threads. The raw system calls switch the calling thread alone: the main
// thread, which makes every path-based filesystem call, while the thread pool keeps root.
#define NAPI_VERSION 8
#include "../napi-errno.h"
#include <errno.h>
#include <node_api.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

// Supplementary groups one switch takes; /etc/group lists far fewer per user.
#define MAX_GROUPS 256

static int uint32_arg(napi_env env, napi_value value, uint32_t *out) {
  return napi_get_value_uint32(env, value, out) == napi_ok ? 0 : -1;
}

// setThreadCredentials(uid, gid, groups): the calling thread's effective uid and gid, and its
// supplementary groups. Root's effective uid comes back first, which changing the others
// needs, so one call switches to a user and another switches back.
static napi_value set_thread_credentials(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  uint32_t uid, gid, count;
  gid_t groups[MAX_GROUPS];
  bool is_array = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 3 ||
      uint32_arg(env, argv[0], &uid) != 0 || uint32_arg(env, argv[1], &gid) != 0 ||
      napi_is_array(env, argv[2], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[2], &count) != napi_ok || count > MAX_GROUPS) {
    napi_throw_type_error(env, NULL, "expected (uid, gid, groups[]) of unsigned integers");
    return NULL;
  }
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    uint32_t group;
    if (napi_get_element(env, argv[2], i, &element) != napi_ok ||
        uint32_arg(env, element, &group) != 0) {
      napi_throw_type_error(env, NULL, "groups must be unsigned integers");
      return NULL;
    }
    groups[i] = group;
  }
  if (syscall(SYS_setresuid, -1, 0, -1) != 0) return throw_errno(env, "setresuid");
  if (syscall(SYS_setgroups, count, groups) != 0) return throw_errno(env, "setgroups");
  if (syscall(SYS_setresgid, -1, gid, -1) != 0) return throw_errno(env, "setresgid");
  if (syscall(SYS_setresuid, -1, uid, -1) != 0) return throw_errno(env, "setresuid");
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "setThreadCredentials", NAPI_AUTO_LENGTH,
                           set_thread_credentials, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "setThreadCredentials", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}
