#!/bin/sh
# Builds the host (kiln CLI and CPU plugin) of a release listed in
# conformance/releases/releases.json from git history, once:
#   conformance/releases/build_release_host.sh RELEASE CACHE_DIR [TARGET...]
# Extracts the release's commit (git archive) into CACHE_DIR/RELEASE/src,
# configures it without tests and benchmarks and builds the TARGETs (default
# `kiln_cli` and `kiln_plugin_cpu`; the 1.0-era host, whose CLI has no
# `kiln conformance`, is driven through its C API: `kiln`, i.e. libkiln.so)
# in CACHE_DIR/RELEASE/src/build. Build type and layout are
# those of the default preset (RelWithDebInfo, build/ in the source tree),
# and ccache hashes paths relative to the build directory, so files a
# release shares with this checkout or another release come from ccache. A finished build is marked by
# CACHE_DIR/RELEASE/STAMP (the commit) and reused; CI caches CACHE_DIR.
# Prints the build directory.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 RELEASE CACHE_DIR [TARGET...]   (releases: conformance/releases/releases.json)" >&2
  exit 2
fi
release=$1
mkdir -p "$2"
cache=$(cd "$2" && pwd)
shift 2
targets=${*:-kiln_cli kiln_plugin_cpu}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
commit=$(python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["releases"]:
    if r["release"] == sys.argv[2]:
        print(r["commit"])
        break
' "$here/releases.json" "$release")
if [ -z "$commit" ]; then
  echo "$0: release '$release' is not in $here/releases.json" >&2
  exit 1
fi
dir="$cache/$release"
build="$dir/src/build"
if [ -f "$dir/STAMP" ] && [ "$(cat "$dir/STAMP")" = "$commit" ] &&
   [ -f "$build/build.ninja" ]; then
  # Built before: an incremental build of the targets (a no-op when they are
  # there; the stamp predates the target list).
  cmake --build "$build" -j"${KILN_RELEASE_BUILD_JOBS:-2}" --target $targets >&2
  echo "$build"
  exit 0
fi
if ! git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "$0: commit $commit of release $release is not in this clone's history" \
       "(a shallow clone? fetch it with: git fetch --unshallow)" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir/src"
git -C "$root" archive "$commit" | tar -x -C "$dir/src"
launcher=""
if command -v ccache >/dev/null; then
  launcher="env;CCACHE_BASEDIR=$dir/src;CCACHE_NOHASHDIR=1;$(command -v ccache)"
fi
configure_and_build() {  # configure_and_build WERROR
  cmake -S "$dir/src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER_LAUNCHER="$launcher" \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
    -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCHMARKS=OFF -DKILN_WERROR="$1" >&2 &&
  cmake --build "$build" -j"${KILN_RELEASE_BUILD_JOBS:-2}" \
    --target $targets >&2
}
# With the release's own warnings-as-errors first (the flags, and so the
# ccache keys, of a default build); a newer compiler's new warnings in old
# code then fall back to a build without -Werror.
if ! configure_and_build ON; then
  echo "$0: release $release does not build with -Werror here; building" \
       "it without" >&2
  rm -rf "$build"
  configure_and_build OFF
fi
echo "$commit" > "$dir/STAMP"
echo "$build"
