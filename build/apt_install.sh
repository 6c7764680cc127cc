#!/usr/bin/env bash
# Installs Debian packages, waiting for another apt or dpkg process (an unattended upgrade, a
# second `make`) to finish instead of failing at once on its lock. apt-get's DPkg::Lock::Timeout
# makes `install` wait for the dpkg lock; `update` takes the package lists' lock, which that option
# does not cover (apt 2.6 fails at once), so `update` is retried while that lock is held.
# Run as root (the Makefile prefixes sudo when needed).
#
#   apt_install.sh PACKAGE ...
set -euo pipefail

wait_seconds=600
deadline=$((SECONDS + wait_seconds))
until out="$(apt-get -q update 2>&1)"; do
  if ! grep -q "Could not get lock" <<<"$out" || ((SECONDS >= deadline)); then
    echo "$out" >&2
    exit 1
  fi
  echo "apt: another process holds the package lists' lock; waiting for it"
  sleep 5
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout="$wait_seconds" "$@"
