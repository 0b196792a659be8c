#!/usr/bin/env bash
# Installs what Sandbar needs on a fresh Debian/Ubuntu machine with Node.js, as root: Debian
# packages (the OCI runtimes crun and runc, and runsc from bookworm-backports; nftables and
# iproute2 for sandbox networks; mmdebstrap for the base template; util-linux for unshare and
# setpriv; tini as PID 1; openssl for the proxy's certificate; libnss-myhostname, whose package
# adds it to nsswitch.conf, so that every program resolves *.localhost, the default sandbox
# domain, to this machine; busybox-static for the runtime tests' tiny rootfs; PostgreSQL for the
# store's second backend; the toolchain node-gyp needs for the node-pty, fs-xattr and
# better-sqlite3 addons and envd's thread-credentials and listening-sockets addons, whose C
# compiler and static libc also build the agent's idmapped-mount helper and envd's run-as;
# qemu-system-x86 to boot the pure cgroup v2 guest of the cgroup-v2 tests; skopeo and umoci,
# with which the builder pulls `fromImage` bases from registries and unpacks them with their
# owners and whiteouts; for the image tests, docker-registry as the
# registry they push to, apache2-utils for its htpasswd file, and musl for the loader of their
# glibc-free image; python3-ipython, -matplotlib, -numpy, -pandas and -pil, which the code
# interpreter's Python worker runs on, and r-base-core, which its R worker runs, for their
# tests), the locked npm dependencies, and the built bundles.
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
packages=(crun runc nftables iproute2 mmdebstrap util-linux tini openssl libnss-myhostname busybox-static postgresql python3 make g++
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

# runsc (gVisor), the opt-in hardened runtime. bookworm's build (0.0~20221219) breaks `ls` and
# `stat` inside the sandbox (statx; host-facts § OCI runtimes); bookworm-backports' works. It is
# fetched from the Debian mirror the host's own apt sources name, through a sources list, lists
# and cache of its own in a temp dir, so the host's apt sources and state stay as they were.
# runsc is a static binary with no dependencies, so backports alone resolves it.
runsc_minimum='0.0~20240729'
runsc_installed=$(dpkg-query -W -f='${Status} ${Version}' runsc 2>/dev/null || true)
if [[ "$runsc_installed" != 'install ok installed '* ]] ||
  ! dpkg --compare-versions "${runsc_installed##* }" ge "$runsc_minimum"; then
  # The URI of the host's bookworm archive (apt parses both sources formats); deb.debian.org
  # when the host has never fetched its lists.
  mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 'Label: Debian' \
    'Codename: bookworm' | head -n 1)
  apt_dir=$(mktemp -d)
  trap 'rm -rf "$apt_dir"' EXIT
  # apt downloads as the unprivileged _apt user, which must reach the lists and cache.
  chmod 755 "$apt_dir"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "deb [signed-by=$keyring] ${mirror:-http://deb.debian.org/debian/} bookworm-backports main" \
    >"$apt_dir/sources.list"
  private_apt=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
  )
  apt-get "${private_apt[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive apt-get "${private_apt[@]}" install -y -qq -t bookworm-backports runsc
fi

# `npm install` with the committed lockfile installs exactly its versions. (`npm ci` refuses
# this lockfile: the registry mirror lacks other platforms' optional packages, so npm leaves
# them out of the lock and then reports them missing.)
npm install --no-audit --no-fund
npm run build
