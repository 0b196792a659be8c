#!/bin/sh
# Second stage of the cgroup v2 guest: PID 1 on the guest's root (guest-stage1.sh). Makes the
# guest look like a pure cgroup v2 host, runs the agent tests there, writes a report on the
# second serial port (guest-report.ts reads it) and powers off. Its settings come from the
# kernel command line as environment variables (guest-vm.ts):
#   sandbar_repo     the repository, a host path
#   sandbar_modules  the guest kernel's lib/modules/<release>, a host path
#   sandbar_tests    the agent test files to run, comma-separated
#   sandbar_test_names  Vitest's -t pattern: which of their tests run
#   sandbar_layer    the base template's layer, a host path, whose ext4 image is /dev/vda
#   sandbar_build    the bundles the agent tests use (scripts/build.mjs's output), a host path
# Any failure ends PID 1, the kernel panics, and qemu exits without the report's end marker.
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
# Emulated CPUs run envd's start ~10× slower than the host; concurrent creates need the room.
export SANDBAR_TEST_ENVD_START_TIMEOUT_MS=60000
host=/mnt/sandbar-host
export SANDBAR_TEST_BUILD_DIR="$host$sandbar_build"

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs shm /dev/shm
# The only cgroup file system, mounted as systemd mounts it on a pure v2 host. The kernel
# command line has cgroup_no_v1=all, so no v1 hierarchy could be mounted either.
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
# Sandboxes put their overlay upper dirs under /tmp, and overlayfs refuses an upper dir on
# overlayfs (the guest's root): these are tmpfs, as on many hosts.
for dir in /run /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs "$dir"; done

# The repository, writable (Vitest writes its temp files there) over the host's copy.
mkdir -p "$sandbar_repo" /run/sandbar-repo/data /run/sandbar-repo/work
mount -t overlay -o "lowerdir=$host$sandbar_repo,upperdir=/run/sandbar-repo/data,workdir=/run/sandbar-repo/work" sandbar-repo "$sandbar_repo"

# The kernel loads modules on demand (overlay, veth, nf_tables, …) through busybox's modprobe.
mkdir -p "/lib/modules/$(uname -r)" /run/sandbar-modprobe
mount --bind "$host$sandbar_modules" "/lib/modules/$(uname -r)"
ln -s /bin/busybox /run/sandbar-modprobe/modprobe
echo /run/sandbar-modprobe/modprobe >/proc/sys/kernel/modprobe
# Each sandbox's disk is a loop-mounted image. devtmpfs has /dev/loop-control only once the
# loop module is in, and nothing opens a device node that would load it on demand.
/run/sandbar-modprobe/modprobe loop
# Sandboxes mount template layers idmapped, which 9p and overlayfs refuse: the layer comes as
# an ext4 disk, mounted where the agent looks for it. The layer directory around it is the
# guest's own: the host's holds its builds in progress, which the guest's agent, seeing other
# PIDs, would take for leftovers and walk to remove.
/run/sandbar-modprobe/modprobe -a virtio_blk ext4
mount -t tmpfs -o mode=0700 tmpfs "$(dirname "$sandbar_layer")"
mkdir "$sandbar_layer"
mount -t ext4 -o ro /dev/vda "$sandbar_layer"

# The guest has no network device. Hosts have an uplink, which the agent's nft rules name: a
# dummy interface carries the default route, and whatever it is sent is dropped.
ip link set lo up
ip link add uplink0 type dummy
ip address add 192.0.2.1/24 dev uplink0
ip link set uplink0 up
ip route add default via 192.0.2.254 dev uplink0

exec 3>/dev/ttyS1
section() { echo "--- $1" >&3; }

section cgroup-mounts
grep -E ' - cgroup2? ' /proc/self/mountinfo >&3 || true
cd "$sandbar_repo"
section cgroup-mode
node --import tsx test/cgroup-v2/print-cgroup-mode.ts >&3

# Through a pipe, so Vitest prints plain lines rather than redrawing a terminal. Each test may
# take 10 minutes: the guest runs at the lowest CPU priority beside the host's own tests, and a
# reconcile case once took past the host's 2-minute limit while they ran. A failed test runs
# once more: under emulation a node process has died of SIGSEGV once (CI, reconcile's agent
# process) and did not again in the next four runs; the same tests run on the host without a
# retry. tini adopts and reaps the processes containers orphan, as a host's init does. The
# test list is split into one argument per file.
{
  status=0
  tini -s -- node node_modules/vitest/vitest.mjs run --project agent \
    --reporter=default --reporter=./test/summary-reporter.ts \
    --reporter=json --outputFile.json=/run/sandbar-vitest.json \
    --testNamePattern "$sandbar_test_names" \
    --testTimeout 600000 --retry 1 \
    $(echo "$sandbar_tests" | tr ',' ' ') || status=$?
  echo "$status" >/run/sandbar-vitest-exit
} 2>&1 | cat
# A failed run is easier to read with what the kernel saw: which process faulted where (the
# OOM reports the tests cause on purpose would push those lines out of a plain tail), then
# its last lines.
if [ "$(cat /run/sandbar-vitest-exit)" != 0 ]; then
  dmesg | grep -E 'segfault|general protection|traps:' | tail -n 20 || true
  dmesg | tail -n 40
fi
section vitest-exit
cat /run/sandbar-vitest-exit >&3
section vitest-json
cat /run/sandbar-vitest.json >&3 || true
echo >&3

# What the tests left: nothing else in the guest makes cgroups, netns, tables or temp files.
section leftovers
find /sys/fs/cgroup -mindepth 1 -type d | sed 's/^/cgroup /' >&3
ip netns list | sed 's/^/netns /' >&3
nft list tables | sed 's/^/nft /' >&3
awk -v repo="$sandbar_repo" '$5 ~ "^/(tmp|run/netns)/" && $5 != repo { print "mount " $5 }' \
  /proc/self/mountinfo >&3
find /tmp -mindepth 1 -maxdepth 1 -name 'sbt-*' | sed 's/^/tmp /' >&3
section end
busybox poweroff -f
