{
  "targets": [
    {
      "target_name": "thread_credentials",
      "sources": ["src/envd/fs/thread-credentials.c"],
      "cflags": ["-Wall", "-Wextra", "-Werror"]
    },
    {
      "target_name": "process_spawn",
      "sources": ["src/spawn/process-spawn.c"],
      "cflags": ["-Wall", "-Wextra", "-Werror"]
    },
    {
      "target_name": "mount_calls",
      "sources": ["src/agent/rootfs/mount-calls.c"],
      "cflags": ["-Wall", "-Wextra", "-Werror"]
    },
    {
      "target_name": "listening_sockets",
      "sources": ["src/envd/port-forward/listening-sockets.c"],
      "cflags": ["-Wall", "-Wextra", "-Werror"]
    }
  ]
}
