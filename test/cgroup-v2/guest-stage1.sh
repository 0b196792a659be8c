#!/bin/busybox sh
# First stage of the cgroup v2 guest: /init of its initramfs (guest-initramfs.ts). Builds the
# guest's root, the host's / (9p, read-only) under a tmpfs overlay so the guest may write
# anywhere while the host sees nothing, and hands over to the second stage in the repository.
# Any failure ends PID 1, the kernel panics, and qemu (-no-reboot, panic=-1) exits.
set -eu
/bin/busybox mkdir -p /proc
/bin/busybox mount -t proc proc /proc
# Links for every applet; busybox finds itself through /proc/self/exe.
/bin/busybox --install -s /bin
export PATH=/bin

mkdir -p /dev /host /upper /root
mount -t devtmpfs devtmpfs /dev
modprobe -a virtio_pci 9pnet_virtio 9p overlay

# cache=loose: the host's files do not change under a test run, and every lookup saved is a
# round trip to qemu saved. msize: larger messages, fewer of them, for node_modules.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 host /host
mount -t tmpfs -o mode=755 guest-root-upper /upper
mkdir /upper/data /upper/work
mount -t overlay -o lowerdir=/host,upperdir=/upper/data,workdir=/upper/work guest-root /root

# The second stage mounts over /tmp, /run and /var/tmp; it reaches the host's own files there.
mkdir -p /root/mnt/sandbar-host
mount --move /host /root/mnt/sandbar-host
umount /proc /dev
# sandbar_repo comes from the kernel command line (guest-vm.ts), as an environment variable.
exec switch_root /root /bin/sh "$sandbar_repo/test/cgroup-v2/guest-stage2.sh"
