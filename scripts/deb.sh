#!/usr/bin/env bash
# Builds the Debian package for lab hosts (drives, no Rust):
# target/debian/iogate_<version>-1_<arch>.deb, with cargo-deb from Cargo.toml's
# [package.metadata.deb] (binary, shipped specs, schemas, the replayed trace, README).
#
#   bash scripts/deb.sh [cargo-deb arguments…]     (e.g. --no-build after a release build)
#
# cargo-deb (pinned) is installed under target/tools on first use, so nothing outside
# the tree changes. Runtime dependencies come from dpkg-shlibdeps (Debian's dpkg-dev,
# which scripts/setup.sh installs).
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$PWD/target/tools
if [ ! -x "$tools/bin/cargo-deb" ]; then
  echo "deb.sh: installing cargo-deb 3.8.0 under target/tools"
  cargo install --quiet --locked --root "$tools" --version 3.8.0 cargo-deb
fi
command -v dpkg-shlibdeps >/dev/null 2>&1 || {
  echo "deb.sh: dpkg-shlibdeps is missing (apt-get install dpkg-dev, or scripts/setup.sh as root)" >&2
  exit 1
}
PATH="$tools/bin:$PATH" cargo deb --locked "$@"
