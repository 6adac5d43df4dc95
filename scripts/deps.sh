#!/bin/sh
# The Debian packages tacosc needs, in groups (the README lists the same):
#   build  building and running tacosc and tacos-run (make, make demo)
#   test   the test suites (make check, make asan, make valgrind): Check, rsvg-convert for the SVG tests,
#          and MPICH, which only check_exec's test_mpich uses (it builds tacos-run a second time against
#          MPICH to show the replayer works with both MPI libraries; Open MPI stays the default)
#   fuzz   make fuzz: clang and its libFuzzer runtime
# Usage: sh scripts/deps.sh [--check] [GROUP...]   (no group: build and test)
# Without --check, missing packages are installed when run as root (waiting for another apt or dpkg run
# to finish rather than failing on its lock); as another user the exact apt-get line is printed and the
# script fails.  With --check nothing is installed: missing packages are named and the script fails.
BUILD_PKGS="build-essential pkg-config libxml2-dev libglpk-dev libigraph-dev libcjson-dev libsvm-dev \
libopenmpi-dev openmpi-bin"
TEST_PKGS="check libsubunit-dev libxml2-utils librsvg2-bin mpich libmpich-dev"
FUZZ_PKGS="clang libclang-rt-dev"
LOCK_WAIT=600 # seconds to wait for another package manager run

check_only=0
groups=""
for a in "$@"; do
    case "$a" in
    --check) check_only=1 ;;
    build | test | fuzz) groups="$groups $a" ;;
    *) echo "deps: unknown group '$a' (build, test or fuzz)" >&2; exit 2 ;;
    esac
done
[ -n "$groups" ] || groups="build test"
pkgs=""
for g in $groups; do
    case "$g" in
    build) pkgs="$pkgs $BUILD_PKGS" ;;
    test) pkgs="$pkgs $TEST_PKGS" ;;
    fuzz) pkgs="$pkgs $FUZZ_PKGS" ;;
    esac
done

command -v dpkg-query >/dev/null 2>&1 || exit 0 # not Debian: nothing to tell
missing=""
for p in $pkgs; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ $check_only = 1 ]; then
    echo "deps: missing Debian packages:$missing" >&2
    echo "  install them with 'make deps' as root, or: apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "deps: missing Debian packages. Run as root:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi

# apt-get waits for dpkg's locks itself (DPkg::Lock::Timeout); the lock of the package lists (apt-get
# update) is retried here, so a concurrent install or unattended upgrade delays this run instead of failing it.
apt_wait() {
    waited=0
    while :; do
        out=$(apt-get -o DPkg::Lock::Timeout=$LOCK_WAIT "$@" 2>&1)
        rc=$?
        case "$out" in
        *"Could not get lock"* | *"Unable to lock"* | *"Unable to acquire"*) ;;
        *) [ $rc = 0 ] || printf '%s\n' "$out" >&2; return $rc ;;
        esac
        if [ $waited -ge $LOCK_WAIT ]; then
            printf '%s\n' "$out" >&2
            echo "deps: the package manager stayed locked for $LOCK_WAIT s" >&2
            return 1
        fi
        [ $waited = 0 ] && echo "deps: another package manager run holds its lock; waiting..." >&2
        sleep 5
        waited=$((waited + 5))
    done
}

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt_wait update -qq && apt_wait install -y -qq --no-install-recommends $missing || {
    echo "deps: apt-get install failed" >&2
    exit 1
}
