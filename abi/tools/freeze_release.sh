#!/bin/sh
# Freezes the extension API of a release, once, when the release is cut:
#   abi/tools/freeze_release.sh BUILD_DIR VERSION      e.g.  build 1.2
#
# BUILD_DIR is a RelWithDebInfo or Debug build of today's tree with the
# target 'kiln' built (for the libkiln.so baseline). VERSION must be the
# KILN_EXT_API_VERSION_MAJOR.MINOR of abi/include/kiln/kiln_version.h.
#
# Creates abi/released/VERSION/ (it must not exist):
#   kiln/*.h                    byte-for-byte copies of abi/include/kiln/*.h
#   SHA256SUMS                  abi.released.VERSION.headers_unchanged
#   layout.inc                  LP64 offsets/sizes (abi/tools/generate_layout.py)
#   libkiln.abi.xml, kiln_extension_api.abi.xml
#                               abidiff baselines (conformance/abi/regenerate_baseline.sh)
# then runs the freeze check of the new copy against today's headers
# (natively and -m32). CMake finds every abi/released/*/SHA256SUMS itself:
# re-run cmake and `ctest -L abi` / `ctest -R abi.` afterwards, and commit
# abi/released/VERSION/ together with the release notes.
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR VERSION   (e.g. $0 build 1.2)" >&2
  exit 2
fi
build=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
include="$root/abi/include"
released="$root/abi/released/$version"

current=$(sed -n \
  -e 's/^#define KILN_EXT_API_VERSION_MAJOR \([0-9]*\).*/\1/p' \
  -e 's/^#define KILN_EXT_API_VERSION_MINOR \([0-9]*\).*/.\1/p' \
  "$include/kiln/kiln_version.h" | tr -d '\n')
if [ "$current" != "$version" ]; then
  echo "$0: abi/include/kiln/kiln_version.h declares extension API $current," \
       "not $version; freeze the version the headers declare" >&2
  exit 1
fi
if [ -e "$released" ]; then
  echo "$0: $released exists; a released version is frozen once and never rewritten" >&2
  exit 1
fi
if [ ! -f "$build/lib/libkiln.so" ]; then
  echo "$0: $build/lib/libkiln.so not found; run" \
       "'cmake --build $build --target kiln' (RelWithDebInfo or Debug) first" >&2
  exit 1
fi
command -v abidw >/dev/null || {
  echo "$0: abidw not found; install abigail-tools" >&2
  exit 1
}

cleanup() {
  if [ "${ok:-0}" != 1 ]; then
    echo "$0: failed; removing the partial $released" >&2
    rm -rf "$released"
  fi
}
trap cleanup EXIT

mkdir -p "$released/kiln"
cp "$include"/kiln/*.h "$released/kiln/"
(cd "$released" && sha256sum kiln/*.h > SHA256SUMS)
python3 "$here/generate_layout.py" "$released" > "$released/layout.inc"
"$root/conformance/abi/regenerate_baseline.sh" "$build" "$version"

for flags in "" "-m32 -ffreestanding"; do
  rc=0
  out=$(python3 "$root/abi/tests/freeze_check.py" --cc "${CC:-cc}" \
    --released "$released" --current "$include" \
    ${flags:+--target-flags "$flags"}) || rc=$?
  echo "$out" | tail -n 1
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    echo "$out" >&2
    echo "$0: the freeze check of the new copy failed" >&2
    exit 1
  fi
done
ok=1
echo "Froze extension API $version in $released."
echo "Next: cmake --preset default && ctest --test-dir $build -R '^abi\\.'"
echo "and commit abi/released/$version/ (never edit it afterwards)."
