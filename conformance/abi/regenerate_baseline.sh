#!/bin/sh
# Regenerates the ABI baselines of a release, at release time only:
#   conformance/abi/regenerate_baseline.sh BUILD_DIR VERSION
# e.g. conformance/abi/regenerate_baseline.sh build 1.1 after
# abi/released/1.1/ has been created (frozen header copy, SHA256SUMS).
#
# Writes, next to the frozen headers (new files; never edit an existing one):
#   abi/released/VERSION/libkiln.abi.xml             abidw of BUILD_DIR's
#       libkiln.so (RelWithDebInfo or Debug build), Kiln* symbols only;
#   abi/released/VERSION/kiln_extension_api.abi.xml  abidw of the anchor
#       library compiled from the frozen headers of VERSION.
# CMake finds every abi/released/*/SHA256SUMS (abi/CMakeLists.txt); run
# abi/tools/freeze_release.sh, which calls this script, rather than this alone.
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR VERSION" >&2
  exit 2
fi
build=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
released="$root/abi/released/$version"
suppr="$here/kiln_public_symbols.suppr"
if [ ! -d "$released/kiln" ]; then
  echo "$0: $released/kiln does not exist; freeze the headers of $version first" >&2
  exit 1
fi
for out in "$released/libkiln.abi.xml" "$released/kiln_extension_api.abi.xml"; do
  if [ -e "$out" ]; then
    echo "$0: $out exists; released baselines are never regenerated" >&2
    exit 1
  fi
done
if [ ! -f "$build/lib/libkiln.so" ]; then
  echo "$0: $build/lib/libkiln.so not found; build target 'kiln' first" >&2
  exit 1
fi
common="--suppressions $suppr --drop-private-types --exported-interfaces-only --no-corpus-path --no-comp-dir-path --short-locs"
# shellcheck disable=SC2086
abidw $common --headers-dir "$root/abi/include" --out-file "$released/libkiln.abi.xml" "$build/lib/libkiln.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -g -O0 -shared -fPIC -fvisibility=hidden -I"$released" \
  -o "$tmp/libkiln_extension_api_anchor.so" "$here/extension_api_anchor.c"
# shellcheck disable=SC2086
abidw $common --headers-dir "$released" --out-file "$released/kiln_extension_api.abi.xml" \
  "$tmp/libkiln_extension_api_anchor.so"
echo "wrote $released/libkiln.abi.xml and $released/kiln_extension_api.abi.xml"
