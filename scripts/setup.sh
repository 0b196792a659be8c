#!/usr/bin/env bash
# Installs what Sandbar needs on a fresh Debian/Ubuntu machine with Node.js, as root: Debian
# packages (the OCI runtimes crun and runc; nftables and iproute2 for sandbox networks;
# mmdebstrap for the base template; util-linux for unshare and setpriv; tini as PID 1;
# busybox-static for the runtime tests' tiny rootfs; PostgreSQL for the store's second
# backend; the toolchain node-gyp needs for the node-pty, fs-xattr and better-sqlite3
# addons), the locked npm dependencies, and the built bundles.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "sandbar setup must run as root (it runs sandboxes and manages namespaces)" >&2
  exit 1
fi

packages=(crun runc nftables iproute2 mmdebstrap util-linux tini busybox-static postgresql python3 make g++)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# `npm install` with the committed lockfile installs exactly its versions. (`npm ci` refuses
# this lockfile: the registry mirror lacks other platforms' optional packages, so npm leaves
# them out of the lock and then reports them missing.)
npm install --no-audit --no-fund
npm run build
