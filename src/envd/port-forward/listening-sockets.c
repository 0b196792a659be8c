// The TCP sockets listening in envd's network namespace, for the port forwarder
// (listening-sockets.ts), asked of the kernel over NETLINK_SOCK_DIAG. Reading /proc/net/tcp
// instead walks the host's whole established-connection hash, every bucket of every network
// namespace, at each read(2): ~15 ms of kernel time on a 24 GiB host, once a second in every
// sandbox. A dump that asks for listeners only walks the listening hash and skips the rest.
//
// The forwarder asks once a second for the sandbox's whole life, and nearly every answer is
// the last one again. Waking node for it cost ~0.4 ms of CPU a second in each idle sandbox.
// So a thread of this addon dumps on its own, and wakes JavaScript only when the listeners or
// the interfaces' addresses changed (watchListeningTcpSockets). The dump is still most of an
// idle envd's CPU: the kernel walks its whole listening hash, host-wide, for each family.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "../napi-errno.h"
#include <errno.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <node_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// include/net/tcp_states.h, which is not exported to userspace.
#define TCP_LISTEN 10

// What a dump does with each listening socket it reads: 0 to go on, -1 to stop with an error.
typedef int (*socket_visitor)(void *context, const struct inet_diag_msg *msg);

// One dump of `family`'s listening TCP sockets, each handed to `visit`. 0, or -1 with errno
// set (or, for the JavaScript visitor, a pending exception).
static int dump_family(int fd, unsigned char family, socket_visitor visit, void *context) {
  struct {
    struct nlmsghdr header;
    struct inet_diag_req_v2 request;
  } ask = {
      .header = {.nlmsg_len = sizeof ask,
                 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
      .request = {.sdiag_family = family,
                  .sdiag_protocol = IPPROTO_TCP,
                  .idiag_states = 1 << TCP_LISTEN},
  };
  if (send(fd, &ask, sizeof ask, 0) < 0) return -1;
  // Larger than a page, which is what the kernel fills a dump message up to; aligned.
  long buffer[8192 / sizeof(long)];
  for (;;) {
    ssize_t received = recv(fd, buffer, sizeof buffer, 0);
    if (received < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    const struct nlmsghdr *header = (const struct nlmsghdr *)buffer;
    for (size_t left = (size_t)received; NLMSG_OK(header, left);
         header = NLMSG_NEXT(header, left)) {
      if (header->nlmsg_type == NLMSG_DONE) return 0;
      if (header->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *error = NLMSG_DATA(header);
        errno = -error->error;
        return -1;
      }
      if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
      if (visit(context, NLMSG_DATA(header)) != 0) return -1;
    }
  }
}

// IPv4 then IPv6 into `visit`, on `fd`. A kernel without IPv6 has no inet6 diag handler, and
// no IPv6 listeners either.
static int dump_listeners(int fd, socket_visitor visit, void *context) {
  if (dump_family(fd, AF_INET, visit, context) != 0) return -1;
  if (dump_family(fd, AF_INET6, visit, context) != 0 && errno != ENOENT) return -1;
  return 0;
}

struct js_list {
  napi_env env;
  napi_value list;
  uint32_t count;
};

// Appends `{ address, port }` to the list: the address as its 4 or 16 bytes in network
// order, the port as a number.
static int append_socket(void *context, const struct inet_diag_msg *msg) {
  struct js_list *target = context;
  napi_env env = target->env;
  size_t length = msg->idiag_family == AF_INET ? 4 : 16;
  napi_value socket, address, port;
  if (napi_create_object(env, &socket) != napi_ok ||
      napi_create_buffer_copy(env, length, msg->id.idiag_src, NULL, &address) != napi_ok ||
      napi_create_uint32(env, ntohs(msg->id.idiag_sport), &port) != napi_ok ||
      napi_set_named_property(env, socket, "address", address) != napi_ok ||
      napi_set_named_property(env, socket, "port", port) != napi_ok ||
      napi_set_element(env, target->list, target->count++, socket) != napi_ok) {
    return -1;
  }
  return 0;
}

// The socket every dump goes through, opened at the first: the port forwarder asks once a
// second for the sandbox's life, and a netlink socket's teardown is deferred kernel work.
// Closed after a failed dump, which may have left messages unread; the next call opens anew.
static int diag_fd = -1;

// listeningTcpSockets(): every TCP socket in the LISTEN state in this network namespace,
// IPv4 then IPv6, as `{ address: Buffer, port: number }`.
static napi_value listening_tcp_sockets(napi_env env, napi_callback_info info) {
  (void)info;
  struct js_list target = {.env = env, .count = 0};
  if (napi_create_array(env, &target.list) != napi_ok) return NULL;
  if (diag_fd < 0) diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (diag_fd < 0) return throw_errno(env, "socket");
  int failed = dump_listeners(diag_fd, append_socket, &target);
  if (failed != 0) {
    int saved = errno;
    close(diag_fd);
    diag_fd = -1;
    errno = saved;
  }
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (failed != 0 && !pending) return throw_errno(env, "sock_diag");
  return failed == 0 ? target.list : NULL;
}

// 64-bit FNV-1a, continued from `hash`.
static uint64_t fnv1a(uint64_t hash, const void *bytes, size_t length) {
  const unsigned char *byte = bytes;
  for (size_t i = 0; i < length; i++) hash = (hash ^ byte[i]) * 0x100000001b3ULL;
  return hash;
}

// An order-free digest of a set: the kernel lists the same sockets in hash-bucket order,
// which need not stay the same. Two sets with equal digests are taken to be equal.
struct set_digest {
  uint64_t sum, mixed, count;
};

static void digest_add(struct set_digest *digest, uint64_t item) {
  digest->sum += item;
  digest->mixed ^= item * 0x9e3779b97f4a7c15ULL;
  digest->count++;
}

static int digest_socket(void *context, const struct inet_diag_msg *msg) {
  size_t length = msg->idiag_family == AF_INET ? 4 : 16;
  uint64_t item = fnv1a(0xcbf29ce484222325ULL, &msg->idiag_family, 1);
  item = fnv1a(item, msg->id.idiag_src, length);
  item = fnv1a(item, &msg->id.idiag_sport, sizeof msg->id.idiag_sport);
  digest_add(context, item);
  return 0;
}

// The interfaces' IPv4 addresses, which the forwarder listens on.
static int digest_addresses(struct set_digest *digest) {
  struct ifaddrs *all;
  if (getifaddrs(&all) != 0) return -1;
  for (struct ifaddrs *entry = all; entry != NULL; entry = entry->ifa_next) {
    if (entry->ifa_addr == NULL || entry->ifa_addr->sa_family != AF_INET) continue;
    const struct sockaddr_in *address = (const struct sockaddr_in *)entry->ifa_addr;
    digest_add(digest, fnv1a(0x84222325cbf29ce4ULL, &address->sin_addr, sizeof address->sin_addr));
  }
  freeifaddrs(all);
  return 0;
}

struct watch {
  napi_threadsafe_function changed;
  unsigned interval_ms;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bool stopping;
};

// Sleeps one interval, or less when told to stop; true when stopping.
static bool wait_interval(struct watch *watch) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += watch->interval_ms / 1000;
  until.tv_nsec += (long)(watch->interval_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&watch->lock);
  while (!watch->stopping &&
         pthread_cond_timedwait(&watch->wake, &watch->lock, &until) != ETIMEDOUT) {
  }
  bool stopping = watch->stopping;
  pthread_mutex_unlock(&watch->lock);
  return stopping;
}

static bool same_digest(const struct set_digest *a, const struct set_digest *b) {
  return a->sum == b->sum && a->mixed == b->mixed && a->count == b->count;
}

// How often the thread reads the interfaces' addresses, in intervals: they change rarely (a
// root inside adding one), and reading them costs a third of a look.
#define ADDRESS_LOOK_EVERY 10

// The watch's thread: a dump each interval (and the addresses every ADDRESS_LOOK_EVERY), and
// a call into JavaScript when either digest is not the last one. A failed look calls too
// (once, until one succeeds), so JavaScript's own dump reports the error; the first look
// always calls.
static void *watch_thread(void *argument) {
  struct watch *watch = argument;
  int fd = -1;
  enum { FIRST, SEEN, FAILED } state = FIRST;
  struct set_digest last_sockets = {0}, last_addresses = {0};
  unsigned since_addresses = 0;
  do {
    if (fd < 0) fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    struct set_digest sockets = {0}, addresses = last_addresses;
    bool ok = fd >= 0 && dump_listeners(fd, digest_socket, &sockets) == 0;
    if (!ok && fd >= 0) {
      close(fd);
      fd = -1;
    }
    if (ok && (state != SEEN || ++since_addresses >= ADDRESS_LOOK_EVERY)) {
      since_addresses = 0;
      addresses = (struct set_digest){0};
      ok = digest_addresses(&addresses) == 0;
    }
    bool changed = ok ? state != SEEN || !same_digest(&sockets, &last_sockets) ||
                            !same_digest(&addresses, &last_addresses)
                      : state != FAILED;
    if (changed) napi_call_threadsafe_function(watch->changed, NULL, napi_tsfn_nonblocking);
    state = ok ? SEEN : FAILED;
    last_sockets = sockets;
    last_addresses = addresses;
  } while (!wait_interval(watch));
  if (fd >= 0) close(fd);
  return NULL;
}

static void call_changed(napi_env env, napi_value callback, void *context, void *data) {
  (void)context;
  (void)data;
  if (env == NULL) return;
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_call_function(env, undefined, callback, 0, NULL, NULL);
}

// stop(): ends the watch's thread, and with it the calls. Idempotent.
static napi_value stop_watch(napi_env env, napi_callback_info info) {
  struct watch *watch;
  if (napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&watch) != napi_ok) return NULL;
  pthread_mutex_lock(&watch->lock);
  bool running = !watch->stopping;
  watch->stopping = true;
  pthread_cond_signal(&watch->wake);
  pthread_mutex_unlock(&watch->lock);
  if (running) {
    pthread_join(watch->thread, NULL);
    napi_release_threadsafe_function(watch->changed, napi_tsfn_abort);
  }
  return NULL;
}

// watchListeningTcpSockets(intervalMs, changed): calls `changed()` on the main thread after
// the first dump and whenever one differs from the last; returns `stop`. The watch never
// keeps the process alive on its own. The thread and its state live until the process ends
// or `stop` is called; a stopped watch's state is kept, as `stop` may be called again.
static napi_value watch_listening_tcp_sockets(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], name, stop;
  uint32_t interval_ms;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
      napi_get_value_uint32(env, argv[0], &interval_ms) != napi_ok || interval_ms == 0) {
    napi_throw_type_error(env, NULL, "watchListeningTcpSockets(intervalMs > 0, changed)");
    return NULL;
  }
  struct watch *watch = calloc(1, sizeof *watch);
  if (watch == NULL) return throw_errno(env, "calloc");
  watch->interval_ms = interval_ms;
  pthread_condattr_t clock;
  pthread_condattr_init(&clock);
  pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
  pthread_cond_init(&watch->wake, &clock);
  pthread_condattr_destroy(&clock);
  pthread_mutex_init(&watch->lock, NULL);
  if (napi_create_string_utf8(env, "listening sockets", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_threadsafe_function(env, argv[1], NULL, name, 0, 1, NULL, NULL, NULL,
                                      call_changed, &watch->changed) != napi_ok) {
    free(watch);
    return NULL;
  }
  napi_unref_threadsafe_function(env, watch->changed);
  int error = pthread_create(&watch->thread, NULL, watch_thread, watch);
  if (error != 0) {
    napi_release_threadsafe_function(watch->changed, napi_tsfn_abort);
    free(watch);
    errno = error;
    return throw_errno(env, "pthread_create");
  }
  if (napi_create_function(env, "stop", NAPI_AUTO_LENGTH, stop_watch, watch, &stop) != napi_ok)
    return NULL;
  return stop;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value list, watch;
  if (napi_create_function(env, "listeningTcpSockets", NAPI_AUTO_LENGTH, listening_tcp_sockets,
                           NULL, &list) != napi_ok ||
      napi_set_named_property(env, exports, "listeningTcpSockets", list) != napi_ok ||
      napi_create_function(env, "watchListeningTcpSockets", NAPI_AUTO_LENGTH,
                           watch_listening_tcp_sockets, NULL, &watch) != napi_ok ||
      napi_set_named_property(env, exports, "watchListeningTcpSockets", watch) != napi_ok) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
