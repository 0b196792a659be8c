// Shared by envd's native addons: a failed system call as a JavaScript Error.
#ifndef SANDBAR_NAPI_ERRNO_H
#define SANDBAR_NAPI_ERRNO_H

#include <errno.h>
#include <node_api.h>
#include <stdio.h>
#include <string.h>

// Throws `<call>: <strerror(errno)>` and returns NULL, for a callback to return.
static inline napi_value throw_errno(napi_env env, const char *call) {
  char message[128];
  snprintf(message, sizeof message, "%s: %s", call, strerror(errno));
  napi_throw_error(env, NULL, message);
  return NULL;
}

#endif
