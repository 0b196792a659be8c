// The agent's mounts, mount checks and unmounts as system calls, where it ran mount(8) and
// umount(8) and read /proc/self/mountinfo. Those cost time in proportion to every mount and
// loop device on the host: with a thousand sandboxes the table holds thousands of lines, the
// host a thousand loop devices, and mount(8)'s `-o loop` stats each device's backing file.
// The calls run on libuv's thread pool, as Node's own fs calls do: a mount or an unmount can
// wait on the filesystem it reads or flushes. Beside them, the append-only flag of the log a
// sandbox's disk holds, where the agent ran chattr(1).
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <node_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef enum { IS_MOUNT_ROOT, UNMOUNT, MOUNT_EXT4, MOUNT_NETNS_SYSFS } mount_call_kind;

// A loop device's sysfs name is loopN; its node /dev/loopN.
#define DEVICE_SIZE 32

typedef struct {
  mount_call_kind kind;
  napi_async_work work;
  napi_deferred deferred;
  // The call's target: the mount point, or the path checked or unmounted.
  char *path;
  // MOUNT_EXT4: the image file or an attached block device; MOUNT_NETNS_SYSFS: the netns file.
  char *source;
  // MOUNT_EXT4: attach `source` to a free loop device first.
  bool attach;
  int error;
  // MOUNT_EXT4 and MOUNT_NETNS_SYSFS: the system call that failed, for the message.
  const char *failed;
  // IS_MOUNT_ROOT: whether the kernel reports the attribute, and its value.
  bool supported;
  bool root;
} mount_call;

// Records the system call that failed and its errno; returns -1.
static int failed(mount_call *call, const char *what) {
  call->failed = what;
  call->error = errno;
  return -1;
}

// Attaches `source` to a free loop device with autoclear, so the device detaches once its last
// user (the filesystem mounted from it) is gone. Concurrent attachers are told the same free
// device by LOOP_CTL_GET_FREE until the first one's LOOP_CONFIGURE completes, which takes
// milliseconds; the others' LOOP_CONFIGURE fails EBUSY meanwhile. So each EBUSY waits a little
// longer before asking for a free device again, rather than spinning on the same answer.
// Returns the attached device's descriptor, or -1 with the failure recorded.
static int attach_loop(mount_call *call, char device[DEVICE_SIZE]) {
  int image = open(call->source, O_RDWR | O_CLOEXEC);
  if (image < 0) return failed(call, "open");
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) {
    failed(call, "open /dev/loop-control");
    close(image);
    return -1;
  }
  int loop = -1;
  // At most ~1 s of waiting.
  for (int attempt = 0; loop < 0 && attempt < 110; attempt++) {
    int number = ioctl(control, LOOP_CTL_GET_FREE);
    if (number < 0) {
      failed(call, "LOOP_CTL_GET_FREE");
      break;
    }
    snprintf(device, DEVICE_SIZE, "/dev/loop%d", number);
    loop = open(device, O_RDWR | O_CLOEXEC);
    if (loop < 0) {
      failed(call, "open the loop device");
      break;
    }
    struct loop_config config;
    memset(&config, 0, sizeof config);
    config.fd = (unsigned)image;
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    strncpy((char *)config.info.lo_file_name, call->source, LO_NAME_SIZE - 1);
    if (ioctl(loop, LOOP_CONFIGURE, &config) != 0) {
      failed(call, "LOOP_CONFIGURE");
      close(loop);
      loop = -1;
      if (call->error != EBUSY) break;
      struct timespec pause = {0, (attempt < 10 ? attempt + 1 : 10) * 1000000L};
      nanosleep(&pause, NULL);
    }
  }
  // An EBUSY retried into an attached device is no failure.
  if (loop >= 0) call->error = 0;
  close(control);
  // The loop device holds the file now.
  close(image);
  return loop;
}

// Mounts ext4 from `source` (attached to a loop device first when asked) at `path`, nodev,
// nosuid and noatime: nothing written there becomes a device or a setuid program on the host.
static void mount_ext4(mount_call *call) {
  char device[DEVICE_SIZE];
  int loop = -1;
  const char *source = call->source;
  if (call->attach) {
    loop = attach_loop(call, device);
    if (loop < 0) return;
    source = device;
  }
  if (mount(source, call->path, "ext4", MS_NODEV | MS_NOSUID | MS_NOATIME, NULL) != 0) {
    failed(call, "mount");
  }
  // Mounted, the filesystem keeps the device; not mounted, this last close detaches it.
  if (loop >= 0) close(loop);
}

// On a thread of its own, which ends after it: setns moves only the calling thread into the
// netns, and no thread of node's pool may be left in a sandbox's.
static void *mount_sysfs_in_netns(void *data) {
  mount_call *call = data;
  int netns = open(call->source, O_RDONLY | O_CLOEXEC);
  if (netns < 0) {
    failed(call, "open");
    return NULL;
  }
  int entered = setns(netns, CLONE_NEWNET);
  if (entered != 0) failed(call, "setns");
  close(netns);
  // sysfs shows the network devices of the netns of the task that mounts it.
  if (entered == 0 &&
      mount("sysfs", call->path, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    failed(call, "mount");
  }
  return NULL;
}

static void run_call(napi_env env, void *data) {
  (void)env;
  mount_call *call = data;
  if (call->kind == MOUNT_EXT4) {
    mount_ext4(call);
    return;
  }
  if (call->kind == MOUNT_NETNS_SYSFS) {
    pthread_t thread;
    int error = pthread_create(&thread, NULL, mount_sysfs_in_netns, call);
    if (error == 0) {
      pthread_join(thread, NULL);
    } else {
      call->failed = "pthread_create";
      call->error = error;
    }
    return;
  }
  if (call->kind == UNMOUNT) {
    call->error = umount2(call->path, UMOUNT_NOFOLLOW) == 0 ? 0 : errno;
    return;
  }
  struct statx stx;
  call->error = statx(AT_FDCWD, call->path, AT_NO_AUTOMOUNT, 0, &stx) == 0 ? 0 : errno;
  call->supported = call->error != 0 || (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0;
  call->root = call->error == 0 && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

// An Error whose `code` is the errno's name where there is one, as Node's fs gives.
static napi_value error_with_code(napi_env env, const char *message, const char *code) {
  napi_value text, error, code_value;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, NULL, text, &error);
  if (code != NULL && napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value) == napi_ok) {
    napi_set_named_property(env, error, "code", code_value);
  }
  return error;
}

static void reject(napi_env env, mount_call *call, const char *message, const char *code) {
  napi_reject_deferred(env, call->deferred, error_with_code(env, message, code));
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
  char message[640];
  napi_value value;
  const char *name = call->kind == UNMOUNT          ? "umount2"
                     : call->kind == IS_MOUNT_ROOT ? "statx"
                                                   : call->failed;
  if (status != napi_ok) {
    reject(env, call, "the mount call was cancelled", NULL);
  } else if (call->kind == IS_MOUNT_ROOT && (call->error == ENOENT || call->error == ENOTDIR)) {
    // Nothing is mounted where nothing is.
    napi_get_boolean(env, false, &value);
    napi_resolve_deferred(env, call->deferred, value);
  } else if (call->error != 0) {
    if (call->source == NULL) {
      snprintf(message, sizeof message, "%s %s: %s", name, call->path, strerror(call->error));
    } else {
      snprintf(message, sizeof message, "%s (%s on %s): %s", name, call->source, call->path,
               strerror(call->error));
    }
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
  free(call->source);
  free(call);
}

// A string argument as a new C string, or NULL.
static char *string_argument(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *text = malloc(length + 1);
  if (text != NULL && napi_get_value_string_utf8(env, value, text, length + 1, &length) != napi_ok) {
    free(text);
    return NULL;
  }
  return text;
}

// Queues `kind` and returns its promise. Its arguments: (path) to check or unmount, (source,
// path, attach) for MOUNT_EXT4, (netnsPath, path) for MOUNT_NETNS_SYSFS.
static napi_value queue_call(napi_env env, napi_callback_info info, mount_call_kind kind) {
  size_t expected = kind == MOUNT_EXT4 ? 3 : kind == MOUNT_NETNS_SYSFS ? 2 : 1;
  size_t argc = 3;
  napi_value argv[3];
  mount_call *call = calloc(1, sizeof *call);
  bool valid = call != NULL && napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok &&
               argc == expected;
  if (valid && expected > 1) {
    call->source = string_argument(env, argv[0]);
    call->path = string_argument(env, argv[1]);
    valid = call->source != NULL && call->path != NULL &&
            (kind != MOUNT_EXT4 || napi_get_value_bool(env, argv[2], &call->attach) == napi_ok);
  } else if (valid) {
    call->path = string_argument(env, argv[0]);
    valid = call->path != NULL;
  }
  if (!valid) {
    if (call != NULL) {
      free(call->path);
      free(call->source);
    }
    free(call);
    napi_throw_type_error(env, NULL, "mount call: wrong arguments");
    return NULL;
  }
  call->kind = kind;
  napi_value promise, name;
  if (napi_create_promise(env, &call->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "mountCall", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, run_call, settle, call, &call->work) != napi_ok ||
      napi_queue_async_work(env, call->work) != napi_ok) {
    free(call->path);
    free(call->source);
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

// mountExt4(source, path, attach): mounts the ext4 filesystem of `source` at `path`, nodev,
// nosuid, noatime; with `attach`, `source` is an image file first attached to a free loop
// device that detaches itself once unmounted.
static napi_value mount_ext4_call(napi_env env, napi_callback_info info) {
  return queue_call(env, info, MOUNT_EXT4);
}

// mountNetnsSysfs(netnsPath, path): mounts, read-only, a sysfs showing the network devices of
// the netns pinned at `netnsPath`, in this process's mount namespace.
static napi_value mount_netns_sysfs(napi_env env, napi_callback_info info) {
  return queue_call(env, info, MOUNT_NETNS_SYSFS);
}

// setAppendOnly(path, on): sets or clears the append-only attribute of the file at `path`, what
// `chattr +a` and `-a` do. Synchronous: an inode flag of a local file takes microseconds, where
// starting chattr held the event loop ~1.3 ms. Throws an Error with the errno's `code`.
static napi_value set_append_only(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  bool on = false;
  char *path = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
      (path = string_argument(env, argv[0])) == NULL ||
      napi_get_value_bool(env, argv[1], &on) != napi_ok) {
    free(path);
    napi_throw_type_error(env, NULL, "setAppendOnly: wrong arguments");
    return NULL;
  }
  const char *failed = "open";
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  int flags = 0;
  if (fd >= 0) {
    failed = "FS_IOC_GETFLAGS";
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
      flags = on ? flags | FS_APPEND_FL : flags & ~FS_APPEND_FL;
      failed = ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0 ? NULL : "FS_IOC_SETFLAGS";
    }
  }
  int error = errno;
  if (fd >= 0) close(fd);
  if (failed != NULL) {
    char message[640];
    snprintf(message, sizeof message, "%s %s: %s", failed, path, strerror(error));
    napi_throw(env, error_with_code(env, message, errno_name(error)));
  }
  free(path);
  return NULL;
}

NAPI_MODULE_INIT() {
  static const struct {
    const char *name;
    napi_callback call;
  } functions[] = {
      {"isMountRoot", is_mount_root},
      {"unmount", unmount},
      {"mountExt4", mount_ext4_call},
      {"mountNetnsSysfs", mount_netns_sysfs},
      {"setAppendOnly", set_append_only},
  };
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    napi_value fn;
    if (napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH, functions[i].call, NULL,
                             &fn) != napi_ok ||
        napi_set_named_property(env, exports, functions[i].name, fn) != napi_ok) {
      return NULL;
    }
  }
  return exports;
}
