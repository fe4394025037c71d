#!/usr/bin/env bash
# Installs what Debian users install and runs it there, without the build
# tree:
#   1. configures a packaging build (-DCMAKE_INSTALL_PREFIX=/usr, no tests)
#      in DEB_BUILD_DIR, builds it and makes the .deb packages with cpack;
#   2. checks each package's name, contents and declared dependencies;
#   3. unpacks every .deb into a clean temporary root (dpkg -x; no root
#      needed) and moves DEB_BUILD_DIR away, so nothing can resolve back
#      into a build tree;
#   4. in that root: `kiln version` finds the CPU plugin in the multiarch
#      plugin directory and says how it found it; `kiln build-example` +
#      `kiln run` (and a corpus model when SHARED_MODELS_DIR has it); the
#      root moved elsewhere still finds its plugins (relocatable);
#   5. a C application built with pkg-config against the root (libkiln from
#      libkiln1, found with LD_LIBRARY_PATH) finds the plugins beside
#      libkiln and runs a model; the dynamic loader's trace shows no file
#      from a build tree;
#   6. an out-of-tree plugin built with find_package(Kiln) against the root
#      validates, loads and runs with the root's kiln.
# Exit status 0 on success, 77 (skipped) when dpkg tools are missing,
# 1 on the first failure. Always removes its temporary directory.
#
# usage: deb_package_test.sh SOURCE_DIR DEB_BUILD_DIR [SHARED_MODELS_DIR]
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 SOURCE_DIR DEB_BUILD_DIR [SHARED_MODELS_DIR]" >&2
  exit 2
fi
SOURCE_DIR=$(cd "$1" && pwd)
DEB_BUILD=$2
MODELS_DIR=${3:-}

step() { echo; echo "==== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

for tool in dpkg-deb dpkg-shlibdeps cpack; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool not found (install dpkg-dev: tools/setup/setup-debian.sh)"
    exit 77
  fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kiln-deb-test.XXXXXX")
AWAY="$DEB_BUILD.moved-away"
cleanup() {
  if [ -d "$AWAY" ]; then mv "$AWAY" "$DEB_BUILD"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
export KILN_PLUGIN_PATH=
GENERATOR=()
if command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi

step "packaging build in $DEB_BUILD (prefix /usr)"
cmake -S "$SOURCE_DIR" -B "$DEB_BUILD" "${GENERATOR[@]}" \
      -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCHMARKS=OFF \
      >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$DEB_BUILD" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" >"$WORK/build.log" 2>&1 ||
  { tail -50 "$WORK/build.log"; fail "build"; }
(cd "$DEB_BUILD" && cpack -G DEB -B "$WORK/debs") >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log"; fail "cpack -G DEB"; }

step "packages, contents and dependencies"
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
LIBDIR="usr/lib/$MULTIARCH"
deb_of() {
  local f
  f=$(ls "$WORK"/debs/"$1"_*.deb 2>/dev/null | head -n 1)
  [ -n "$f" ] || fail "cpack made no $1 package (made: $(ls "$WORK/debs"))"
  echo "$f"
}
RUNTIME_DEB=$(deb_of libkiln1)
DEV_DEB=$(deb_of libkiln-dev)
TOOLS_DEB=$(deb_of kiln-tools)
for deb in "$RUNTIME_DEB" "$DEV_DEB" "$TOOLS_DEB"; do
  echo "-- $(basename "$deb")"
  dpkg-deb -f "$deb" Package Version Section Depends Recommends
done
expect_file() {  # deb, path inside
  dpkg-deb -c "$1" | awk '{print $6}' | grep -qx "./$2" ||
    fail "$(basename "$1") lacks /$2"
}
expect_depends() {  # deb, extended regex on the Depends field
  dpkg-deb -f "$1" Depends | grep -Eq "$2" ||
    fail "$(basename "$1") does not depend on /$2/: $(dpkg-deb -f "$1" Depends)"
}
expect_file "$RUNTIME_DEB" "$LIBDIR/libkiln.so.1"
expect_file "$RUNTIME_DEB" "$LIBDIR/kiln/plugins/libkiln_cpu.so"
expect_file "$RUNTIME_DEB" "$LIBDIR/kiln/plugins/libkiln_opencl.so"
expect_file "$DEV_DEB" "usr/include/kiln/kiln_c_api.h"
expect_file "$DEV_DEB" "usr/include/kiln/sdk/plugin.h"
expect_file "$DEV_DEB" "$LIBDIR/libkiln.so"
expect_file "$DEV_DEB" "$LIBDIR/cmake/Kiln/KilnConfig.cmake"
expect_file "$DEV_DEB" "$LIBDIR/pkgconfig/kiln.pc"
expect_file "$DEV_DEB" "usr/share/kiln/proto/kiln/delegate_settings.proto"
expect_file "$TOOLS_DEB" "usr/bin/kiln"
if dpkg-deb -c "$RUNTIME_DEB" | grep -q "usr/include\|usr/bin"; then
  fail "libkiln1 carries development files or tools"
fi
# Computed by dpkg-shlibdeps from what the files link, plus the OpenCL ICD
# loader the OpenCL plugin dlopens.
expect_depends "$RUNTIME_DEB" "libc6"
expect_depends "$RUNTIME_DEB" "libstdc\\+\\+6"
expect_depends "$RUNTIME_DEB" "libprotobuf[0-9]"
expect_depends "$RUNTIME_DEB" "libabsl"
expect_depends "$RUNTIME_DEB" "ocl-icd-libopencl1 \\| libopencl1"
expect_depends "$DEV_DEB" "libkiln1 \\(= "
expect_depends "$TOOLS_DEB" "libkiln1 \\(= "

step "unpack into a clean root; move the packaging build away"
ROOT="$WORK/root"
for deb in "$RUNTIME_DEB" "$DEV_DEB" "$TOOLS_DEB"; do dpkg -x "$deb" "$ROOT"; done
mv "$DEB_BUILD" "$AWAY"
KILN="$ROOT/usr/bin/kiln"
export LD_LIBRARY_PATH="$ROOT/$LIBDIR"

step "kiln version in the root finds its plugins"
"$KILN" version | tee "$WORK/version.txt"
grep -Eq "^Default plugin dir +$ROOT/$LIBDIR/kiln/plugins\$" "$WORK/version.txt" ||
  fail "kiln version does not use $ROOT/$LIBDIR/kiln/plugins"
grep -q "relative to the executable ($KILN)" "$WORK/version.txt" ||
  fail "kiln version does not say how it found the plugin directory"
grep -Eq "^  loaded +kiln_cpu " "$WORK/version.txt" ||
  fail "kiln version did not load the CPU plugin from the package"

step "kiln build-example + kiln run in the root"
"$KILN" build-example "$WORK/example.tflite" || fail "kiln build-example"
"$KILN" run "$WORK/example.tflite" --input random --output-dir "$WORK/out" ||
  fail "kiln run on the example model"
[ -s "$WORK/out/outputs.json" ] || fail "kiln run wrote no outputs.json"
CORPUS_MODEL="$MODELS_DIR/misc/mobilenet_like_model.bin"
if [ -n "$MODELS_DIR" ] && [ -f "$CORPUS_MODEL" ]; then
  "$KILN" run "$CORPUS_MODEL" --input random --output-dir "$WORK/corpus_out" ||
    fail "kiln run $CORPUS_MODEL"
else
  echo "corpus model step skipped: $CORPUS_MODEL absent (the example model ran)"
fi

step "the root moved elsewhere still finds its plugins"
mv "$ROOT" "$WORK/moved"
"$WORK/moved/usr/bin/kiln" version >"$WORK/moved.txt"
grep -Eq "^  loaded +kiln_cpu .*" "$WORK/moved.txt" &&
  grep -q "$WORK/moved/$LIBDIR/kiln/plugins" "$WORK/moved.txt" ||
  { cat "$WORK/moved.txt"; fail "the moved root's kiln lost its plugins"; }
mv "$WORK/moved" "$ROOT"

step "C application against the root (pkg-config): libkiln finds its plugins"
export PKG_CONFIG_PATH="$ROOT/$LIBDIR/pkgconfig"
cat >"$WORK/where.c" <<'EOF'
#include <stdio.h>
#include "kiln/kiln_c_api.h"
int main(void) {
  printf("dir %s\nfound %s\n", KilnDefaultPluginDirectory(),
         KilnDefaultPluginDirectoryOrigin());
  return 0;
}
EOF
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror "$WORK/where.c" -o "$WORK/where" $(pkg-config --cflags --libs kiln) ||
  fail "building a C application with pkg-config against the root"
"$WORK/where" | tee "$WORK/where.txt"
grep -qx "dir $ROOT/$LIBDIR/kiln/plugins" "$WORK/where.txt" ||
  fail "libkiln from the root does not look beside itself"
grep -q "beside libkiln ($ROOT/$LIBDIR/libkiln.so" "$WORK/where.txt" ||
  fail "libkiln does not say it looked beside itself"
awk '/<!-- host-example:begin -->/{on=1;next} /<!-- host-example:end -->/{on=0} on' \
    "$SOURCE_DIR/docs/host-guide.md" | sed '/^```/d' >"$WORK/run_model.c"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -std=c11 "$WORK/run_model.c" -o "$WORK/run_model" \
   $(pkg-config --cflags --libs kiln) || fail "building the host guide example"
LD_DEBUG=files "$WORK/run_model" "$WORK/example.tflite" \
    >"$WORK/run_model.txt" 2>"$WORK/ld_debug.txt" ||
  { cat "$WORK/run_model.txt" "$WORK/ld_debug.txt" | tail -40; fail "run_model"; }
cat "$WORK/run_model.txt"
grep -q "^output 0 " "$WORK/run_model.txt" || fail "run_model printed no output"
grep -q "file=$ROOT/$LIBDIR/kiln/plugins/libkiln_cpu.so" "$WORK/ld_debug.txt" ||
  fail "run_model did not load the root's CPU plugin"
if grep -E "file=($AWAY|$DEB_BUILD|$SOURCE_DIR/build)" "$WORK/ld_debug.txt"; then
  fail "a library was loaded from a build tree"
fi

step "out-of-tree plugin with find_package(Kiln) against the root"
cmake -S "$SOURCE_DIR/sdk/examples/kernel_plugin" -B "$WORK/plugin" \
      "${GENERATOR[@]}" -DCMAKE_PREFIX_PATH="$ROOT/usr" \
      -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >"$WORK/plugin.log" 2>&1 &&
  cmake --build "$WORK/plugin" >>"$WORK/plugin.log" 2>&1 ||
  { cat "$WORK/plugin.log"; fail "building sdk/examples/kernel_plugin against the root"; }
grep -q "$ROOT/$LIBDIR/cmake/Kiln" "$WORK/plugin/CMakeCache.txt" ||
  fail "find_package(Kiln) did not use the root's CMake package"
PLUGIN="$WORK/plugin/libacme_kernels.so"
"$KILN" plugin validate "$PLUGIN" || fail "kiln plugin validate $PLUGIN"
"$KILN" build-example "$WORK/softsign.tflite" --single-op acme.SoftSign ||
  fail "kiln build-example --single-op acme.SoftSign"
"$KILN" run "$WORK/softsign.tflite" --plugin "$PLUGIN" --input random \
    --output-dir "$WORK/softsign_out" || fail "kiln run through the out-of-tree plugin"

step "all Debian package checks passed"
