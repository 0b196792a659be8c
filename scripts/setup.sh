#!/usr/bin/env bash
# Installs what Sandbar needs on a fresh Debian/Ubuntu machine with Node.js, as root: Debian
# packages (the OCI runtimes crun and runc, and runsc from bookworm-backports; nftables and
# iproute2 for sandbox networks; mmdebstrap for the base template; util-linux for unshare and
# setpriv; tini as PID 1; openssl for the proxy's certificate; libnss-myhostname, whose package
# adds it to nsswitch.conf, so that every program resolves *.localhost, the default sandbox
# domain, to this machine; busybox-static for the runtime tests' tiny rootfs; PostgreSQL for the
# store's second backend; the toolchain node-gyp needs for the node-pty, fs-xattr and
# better-sqlite3 addons, envd's thread-credentials and listening-sockets addons and the agent's
# mount-calls addon, whose C compiler and static libc also build the agent's idmapped-mount
# and without-unified-cgroup helpers and envd's run-as;
# qemu-system-x86 to boot the pure cgroup v2 guest of the cgroup-v2 tests; skopeo and umoci,
# with which the builder pulls `fromImage` bases from registries and unpacks them with their
# owners and whiteouts; for the image tests, docker-registry as the
# registry they push to, apache2-utils for its htpasswd file, and musl for the loader of their
# glibc-free image; python3-ipython, -matplotlib, -numpy, -pandas and -pil, which the code
# interpreter's Python worker runs on, and r-base-core, which its R worker runs, for their
# tests); CRIU from Debian forky, which hibernates paused sandboxes; the locked npm
# dependencies, and the built bundles.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "sandbar setup must run as root (it runs sandboxes and manages namespaces)" >&2
  exit 1
fi

# Prints those of the named packages that are not installed, one per line.
not_installed() {
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      echo "$package"
  done
}
packages=(crun runc nftables iproute2 mmdebstrap util-linux tini openssl libnss-myhostname busybox-static postgresql python3 make g++ zstd
  skopeo umoci docker-registry apache2-utils musl
  python3-ipython python3-matplotlib python3-numpy python3-pandas python3-pil)
# Installed without recommends: qemu-system-x86 is then 29 packages, 17 MB to download and
# 81 MB installed, instead of 175 packages and 163 MB (GTK, SDL, audio) the guest never uses.
# r-base-core likewise: the R worker's tests need R alone, not the recommended R packages, the
# compilers of r-base-dev, the HTML manuals and the Perl that xdg-utils recommends.
lean_packages=(qemu-system-x86 r-base-core)
mapfile -t missing < <(not_installed "${packages[@]}")
mapfile -t lean_missing < <(not_installed "${lean_packages[@]}")
if [ $((${#missing[@]} + ${#lean_missing[@]})) -gt 0 ]; then
  apt-get update -qq
fi
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
if [ "${#lean_missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean_missing[@]}"
fi
# The docker-registry package enables a service on every interface's port 5000; the image tests
# start registries of their own on loopback, so on a systemd host the packaged one stays off.
if [ -d /run/systemd/system ] && systemctl is-enabled --quiet docker-registry 2>/dev/null; then
  systemctl disable --now docker-registry
fi

# Packages from other Debian suites come from the Debian mirror the host's own apt sources
# name, through a sources list, lists and cache of their own in a temp dir (removed on exit),
# so the host's apt sources and state stay as they were. `with_suite SUITE` points the array
# `suite_apt` at such a set-up for SUITE, and `suite_dir` at its directory.
apt_dirs=()
trap 'rm -rf "${apt_dirs[@]}"' EXIT
with_suite() {
  # The URI of the host's bookworm archive (apt parses both sources formats); deb.debian.org
  # when the host has never fetched its lists.
  local mirror
  mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 'Label: Debian' \
    'Codename: bookworm' | head -n 1)
  suite_dir=$(mktemp -d)
  apt_dirs+=("$suite_dir")
  # apt downloads as the unprivileged _apt user, which must reach the lists and cache.
  chmod 755 "$suite_dir"
  mkdir -p "$suite_dir/lists/partial" "$suite_dir/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror:-http://deb.debian.org/debian/} $1 main" \
    >"$suite_dir/sources.list"
  suite_apt=(
    -o "Dir::Etc::SourceList=$suite_dir/sources.list"
    -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$suite_dir/lists"
    -o "Dir::Cache=$suite_dir/cache"
  )
  apt-get "${suite_apt[@]}" update -qq
}

# runsc (gVisor), the opt-in hardened runtime. bookworm's build (0.0~20221219) breaks `ls` and
# `stat` inside the sandbox (statx; host-facts § OCI runtimes); bookworm-backports' works.
# runsc is a static binary with no dependencies, so backports alone resolves it.
runsc_minimum='0.0~20240729'
runsc_installed=$(dpkg-query -W -f='${Status} ${Version}' runsc 2>/dev/null || true)
if [[ "$runsc_installed" != 'install ok installed '* ]] ||
  ! dpkg --compare-versions "${runsc_installed##* }" ge "$runsc_minimum"; then
  with_suite bookworm-backports
  DEBIAN_FRONTEND=noninteractive apt-get "${suite_apt[@]}" install -y -qq -t bookworm-backports runsc
fi

# CRIU, which hibernates paused sandboxes to disk and restores them. bookworm's criu 3.17 fails
# on kernel 6.18, and trixie's 4.1 cannot dump a TCP socket on 6.16 and later (it asks every
# socket for SO_PASSCRED, which those kernels refuse outside unix and netlink sockets); 4.2
# dumps both. It comes from Debian forky with its own libraries, unpacked under /opt/sandbar/criu
# (the host's packages stay as they are) and run through forky's own loader, since forky's
# libraries need a newer glibc than bookworm's.
criu_dir=/opt/sandbar/criu
criu_minimum='4.2'
criu_version=$("$criu_dir/bin/criu" --version 2>/dev/null | sed -n 's/^Version: //p' || true)
if [ -z "$criu_version" ] || ! dpkg --compare-versions "$criu_version" ge "$criu_minimum"; then
  with_suite forky
  # criu and every library it links, resolved in forky alone (an empty status file: apt takes
  # nothing as installed).
  forky_apt=("${suite_apt[@]}" -o Dir::State::status=/dev/null)
  mapfile -t criu_packages < <(apt-cache "${forky_apt[@]}" depends --recurse --no-recommends \
    --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances criu |
    grep -v -e '^ ' -e '<' | sort -u)
  mkdir "$suite_dir/debs"
  (cd "$suite_dir/debs" && apt-get "${forky_apt[@]}" download -qq "${criu_packages[@]}" 2>/dev/null)
  rm -rf "$criu_dir.new"
  mkdir -p "$criu_dir.new/root" "$criu_dir.new/bin"
  for deb in "$suite_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$criu_dir.new/root"; done
  libs="$criu_dir/root/usr/lib/x86_64-linux-gnu"
  printf '#!/bin/sh\nexec %s/ld-linux-x86-64.so.2 --library-path %s %s/root/usr/sbin/criu "$@"\n' \
    "$libs" "$libs" "$criu_dir" >"$criu_dir.new/bin/criu"
  chmod 755 "$criu_dir.new/bin/criu"
  rm -rf "$criu_dir" && mv "$criu_dir.new" "$criu_dir"
  "$criu_dir/bin/criu" --version | sed -n 's/^Version: /criu /p'
fi

# `npm install` with the committed lockfile installs exactly its versions. (`npm ci` refuses
# this lockfile: the registry mirror lacks other platforms' optional packages, so npm leaves
# them out of the lock and then reports them missing.)
npm install --no-audit --no-fund
npm run build
