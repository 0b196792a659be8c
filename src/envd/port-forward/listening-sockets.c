// The TCP sockets listening in envd's network namespace, for the port forwarder
// (listening-sockets.ts), asked of the kernel over NETLINK_SOCK_DIAG. Reading /proc/net/tcp
// instead walks the host's whole established-connection hash, every bucket of every network
// namespace, at each read(2): ~15 ms of kernel time on a 24 GiB host, once a second in every
// sandbox. A dump that asks for listeners only walks the listening hash and skips the rest.
#define NAPI_VERSION 8
#include "../napi-errno.h"
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <node_api.h>
#include <sys/socket.h>
#include <unistd.h>

// include/net/tcp_states.h, which is not exported to userspace.
#define TCP_LISTEN 10

// Appends `{ address, port }` to `list` for one inet_diag_msg: the address as its 4 or 16
// bytes in network order, the port as a number.
static int append_socket(napi_env env, napi_value list, uint32_t *count,
                         const struct inet_diag_msg *msg) {
  size_t length = msg->idiag_family == AF_INET ? 4 : 16;
  napi_value socket, address, port;
  if (napi_create_object(env, &socket) != napi_ok ||
      napi_create_buffer_copy(env, length, msg->id.idiag_src, NULL, &address) != napi_ok ||
      napi_create_uint32(env, ntohs(msg->id.idiag_sport), &port) != napi_ok ||
      napi_set_named_property(env, socket, "address", address) != napi_ok ||
      napi_set_named_property(env, socket, "port", port) != napi_ok ||
      napi_set_element(env, list, (*count)++, socket) != napi_ok) {
    return -1;
  }
  return 0;
}

// One dump of `family`'s listening TCP sockets into `list`. 0, or -1 with errno set (or a
// pending JavaScript exception, when building the list failed).
static int dump_family(napi_env env, int fd, unsigned char family, napi_value list,
                       uint32_t *count) {
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
      if (append_socket(env, list, count, NLMSG_DATA(header)) != 0) return -1;
    }
  }
}

// The socket every dump goes through, opened at the first: the port forwarder asks once a
// second for the sandbox's life, and a netlink socket's teardown is deferred kernel work.
// Closed after a failed dump, which may have left messages unread; the next call opens anew.
static int diag_fd = -1;

// listeningTcpSockets(): every TCP socket in the LISTEN state in this network namespace,
// IPv4 then IPv6, as `{ address: Buffer, port: number }`.
static napi_value listening_tcp_sockets(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value list;
  uint32_t count = 0;
  if (napi_create_array(env, &list) != napi_ok) return NULL;
  if (diag_fd < 0) diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (diag_fd < 0) return throw_errno(env, "socket");
  int failed = dump_family(env, diag_fd, AF_INET, list, &count);
  // A kernel without IPv6 has no inet6 diag handler, and no IPv6 listeners either.
  if (failed == 0 && dump_family(env, diag_fd, AF_INET6, list, &count) != 0 && errno != ENOENT) {
    failed = -1;
  }
  if (failed != 0) {
    int saved = errno;
    close(diag_fd);
    diag_fd = -1;
    errno = saved;
  }
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (failed != 0 && !pending) return throw_errno(env, "sock_diag");
  return failed == 0 ? list : NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value function;
  if (napi_create_function(env, "listeningTcpSockets", NAPI_AUTO_LENGTH, listening_tcp_sockets,
                           NULL, &function) != napi_ok ||
      napi_set_named_property(env, exports, "listeningTcpSockets", function) != napi_ok) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
