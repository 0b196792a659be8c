{
  "targets": [
    {
      "target_name": "thread_credentials",
      "sources": ["src/envd/fs/thread-credentials.c"],
      "cflags": ["-Wall", "-Wextra", "-Werror"]
    }
  ]
}
