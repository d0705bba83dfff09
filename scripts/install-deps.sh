#!/bin/sh
# Installs the Debian packages the build, the tests and the benchmarks need.
# As root it installs what is missing; otherwise it prints the exact apt-get line and fails.
set -eu

pkgs="gcc make perl python3 pkg-config liburcu-dev spin gnuplot-nox"

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing packages:$missing (not a Debian system: install them by hand)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages. Run:" >&2
	echo "  sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
