#!/bin/sh
# Install the Debian packages tacosc needs when they are missing.  As root it runs apt-get; otherwise it
# prints the exact command and fails.
PKGS="build-essential pkg-config libxml2-dev libxml2-utils libglpk-dev libigraph-dev libcjson-dev check \
libsubunit-dev libopenmpi-dev openmpi-bin mpich libmpich-dev libsvm-dev librsvg2-bin"
missing=""
for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
        echo "deps: apt-get install failed" >&2; exit 1; }
else
    echo "deps: missing Debian packages. Run as root:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
