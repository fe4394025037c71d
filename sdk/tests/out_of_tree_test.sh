#!/usr/bin/env bash
# Proves the installed SDK works from outside the source tree:
#   1. installs BUILD_DIR into a temporary prefix (cmake --install);
#   2. configures and builds sdk/examples/kernel_plugin,
#      sdk/examples/delegate_plugin, sdk/template and the delegate example
#      of docs/vendor-guide.md against it with -DCMAKE_PREFIX_PATH=<prefix>
#      (warnings are errors);
#   3. runs <prefix>/bin/kiln plugin validate on each built plugin and
#      <prefix>/bin/kiln version --plugin on each (must say "loaded");
#   4. builds a C application with pkg-config and with find_package(Kiln)
#      and runs it;
#   5. extracts the C example from docs/host-guide.md, builds it with
#      pkg-config and runs it on a model through the installed CPU plugin;
#   6. runs a model through the example kernel plugin, checks that
#      `kiln inspect --delegate acme` gives the example delegate's reason for
#      a node it declines, and (with the shared models) runs a model through
#      the example delegate and the vendor guide's delegate;
#   7. `kiln plugin inspect` shows the example delegate's declared ops and
#      its own settings message (acme.AcmeSettings) without a model, and
#      (with the shared models) a settings file of that message, text and
#      binary, changes what acme claims; a bad one is reported.
# Fails on the first failing step; always removes its temporary directory.
#
# usage: out_of_tree_test.sh BUILD_DIR SOURCE_DIR [SHARED_MODELS_DIR]
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [SHARED_MODELS_DIR]" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
SOURCE_DIR=$(cd "$2" && pwd)
MODELS_DIR=${3:-}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kiln-sdk-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"
GENERATOR=()
if command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi
# Plugins and applications must build cleanly.
STRICT_CXX="-Wall -Wextra -Werror"
STRICT_C="-Wall -Wextra -Werror -std=c11 -pedantic"
# Only the plugins under test, never the user's environment.
export KILN_PLUGIN_PATH=

step() { echo; echo "==== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

step "install $BUILD_DIR into $PREFIX"
cmake --install "$BUILD_DIR" --prefix "$PREFIX" >"$WORK/install.log" ||
  { cat "$WORK/install.log"; fail "cmake --install"; }
for f in bin/kiln include/kiln/kiln_c_api.h include/kiln/kiln_plugin.h \
         include/kiln/sdk/plugin.h lib/cmake/Kiln/KilnConfig.cmake \
         lib/cmake/Kiln/KilnConfigVersion.cmake lib/cmake/Kiln/KilnPlugin.cmake \
         lib/cmake/Kiln/KilnEmbedBytes.cmake \
         lib/cmake/Kiln/kiln_plugin.map lib/pkgconfig/kiln.pc \
         lib/kiln/plugins/libkiln_cpu.so share/kiln/proto/kiln/delegate_settings.proto; do
  [ -e "$PREFIX/$f" ] || fail "installed tree lacks $f"
done
ls "$PREFIX"/lib/libkiln.so.* >/dev/null 2>&1 || fail "installed tree lacks a versioned libkiln.so.N"
KILN="$PREFIX/bin/kiln"

step "installed kiln finds its installed CPU plugin by default"
"$KILN" version | tee "$WORK/version.txt"
grep -Eq "^  loaded +kiln_cpu " "$WORK/version.txt" ||
  fail "installed kiln did not load $PREFIX/lib/kiln/plugins/libkiln_cpu.so by default"

# Builds the CMake project in $1 against the installed SDK into $2.
build_project() {
  local src=$1 out=$2
  cmake -S "$src" -B "$out" "${GENERATOR[@]}" \
        -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_FLAGS="$STRICT_CXX" -DCMAKE_C_FLAGS="$STRICT_C" \
        >"$out.configure.log" 2>&1 ||
    { cat "$out.configure.log"; fail "configure $src"; }
  cmake --build "$out" >"$out.build.log" 2>&1 ||
    { cat "$out.build.log"; fail "build $src"; }
}

# Validates and loads one plugin with the installed CLI.
check_plugin() {
  local plugin=$1 name=$2
  [ -f "$plugin" ] || fail "$plugin was not built"
  "$KILN" plugin validate "$plugin" || fail "kiln plugin validate $plugin"
  "$KILN" version --no-default-plugins --plugin "$plugin" | tee "$WORK/v.txt"
  grep -Eq "^  loaded +$name " "$WORK/v.txt" ||
    fail "kiln version --plugin $plugin does not show '$name' as loaded"
}

step "kernel plugin example (sdk/examples/kernel_plugin)"
build_project "$SOURCE_DIR/sdk/examples/kernel_plugin" "$WORK/kernel_plugin"
check_plugin "$WORK/kernel_plugin/libacme_kernels.so" acme_kernels

step "delegate plugin example (sdk/examples/delegate_plugin)"
build_project "$SOURCE_DIR/sdk/examples/delegate_plugin" "$WORK/delegate_plugin"
check_plugin "$WORK/delegate_plugin/libacme_delegate.so" acme_delegate

step "kiln plugin inspect on the example delegate (no model)"
"$KILN" plugin inspect "$WORK/delegate_plugin/libacme_delegate.so" ||
  fail "kiln plugin inspect libacme_delegate.so"
"$KILN" plugin inspect "$WORK/delegate_plugin/libacme_delegate.so" --json \
    >"$WORK/acme_inspect.json" || fail "kiln plugin inspect --json"
python3 - "$WORK/acme_inspect.json" <<'PY' || fail "acme's declarations"
import json, sys
p = json.load(open(sys.argv[1]))["plugin"]
assert p["negotiation"] == "accepted", p
d = p["delegate"]
assert d["name"] == "acme" and d["settings_type"] == "acme.AcmeSettings", d
assert d["settings_fields"] == "skip_ops (repeated string)", d
ops = [(o["op"], o["min_version"], o["max_version"], o["tensor_types"])
       for o in d["supported_ops"]]
assert ops == [("ADD", 1, 1, ["FLOAT32"]), ("MUL", 1, 1, ["FLOAT32"])], ops
print("acme declares", ops, "and settings", d["settings_type"])
PY

step "delegate example of the vendor guide (docs/vendor-guide.md)"
mkdir -p "$WORK/guide_delegate-src"
awk '/<!-- delegate-example:begin -->/{on=1;next} /<!-- delegate-example:end -->/{on=0} on' \
    "$SOURCE_DIR/docs/vendor-guide.md" | sed '/^```/d' >"$WORK/guide_delegate-src/my_npu.cc"
[ -s "$WORK/guide_delegate-src/my_npu.cc" ] ||
  fail "no C++ example between delegate-example markers in docs/vendor-guide.md"
cat >"$WORK/guide_delegate-src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.19)
project(my_npu LANGUAGES CXX)
find_package(Kiln REQUIRED)
kiln_add_plugin(my_npu SOURCES my_npu.cc)
CMAKE
build_project "$WORK/guide_delegate-src" "$WORK/guide_delegate"
check_plugin "$WORK/guide_delegate/libmy_npu.so" my_npu

step "plugin template (sdk/template)"
cp -r "$SOURCE_DIR/sdk/template" "$WORK/template-src"
build_project "$WORK/template-src" "$WORK/template"
check_plugin "$WORK/template/libmy_vendor_plugin.so" my_vendor

step "C application via pkg-config"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
pkg-config --exists kiln || fail "pkg-config cannot find kiln.pc"
# shellcheck disable=SC2046
cc $STRICT_C "$SOURCE_DIR/sdk/tests/version_app/version_app.c" \
   -o "$WORK/version_app_pc" $(pkg-config --cflags --libs kiln) \
   -Wl,-rpath,"$(pkg-config --variable=libdir kiln)" ||
  fail "building version_app.c with pkg-config"
"$WORK/version_app_pc" || fail "version_app (pkg-config build) failed"

step "C application via find_package(Kiln)"
build_project "$SOURCE_DIR/sdk/tests/version_app" "$WORK/version_app"
"$WORK/version_app/version_app" || fail "version_app (find_package build) failed"

step "host guide example (docs/host-guide.md)"
awk '/<!-- host-example:begin -->/{on=1;next} /<!-- host-example:end -->/{on=0} on' \
    "$SOURCE_DIR/docs/host-guide.md" | sed '/^```/d' >"$WORK/run_model.c"
[ -s "$WORK/run_model.c" ] || fail "no C example between host-example markers in docs/host-guide.md"
# shellcheck disable=SC2046
cc $STRICT_C "$WORK/run_model.c" -o "$WORK/run_model" \
   $(pkg-config --cflags --libs kiln) \
   -Wl,-rpath,"$(pkg-config --variable=libdir kiln)" ||
  fail "building the docs/host-guide.md example"
MODEL="$MODELS_DIR/misc/add_10x10.tflite"
if [ -n "$MODELS_DIR" ] && [ -f "$MODEL" ]; then
  "$WORK/run_model" "$MODEL" | tee "$WORK/run_model.txt" ||
    fail "the docs/host-guide.md example failed on $MODEL"
  grep -q "^output 0 " "$WORK/run_model.txt" ||
    fail "the host guide example printed no output"
fi

step "kiln run through the example kernel plugin (custom op acme.SoftSign)"
"$KILN" build-example "$WORK/softsign.tflite" --single-op acme.SoftSign ||
  fail "kiln build-example --single-op acme.SoftSign"
KERNEL_PLUGIN=$(find "$WORK/kernel_plugin" -name 'libacme_kernels.so' | head -n 1)
[ -n "$KERNEL_PLUGIN" ] || fail "libacme_kernels.so was not built"
"$KILN" run "$WORK/softsign.tflite" --plugin "$KERNEL_PLUGIN" --input random \
    --output-dir "$WORK/softsign_out" || fail "kiln run through acme_kernels"
python3 - "$WORK/softsign_out" <<'PY' || fail "acme.SoftSign output is wrong"
import json, sys, numpy as np
out = sys.argv[1]
m = json.load(open(out + "/outputs.json"))
y = np.load(out + "/" + m["outputs"][0]["file"])
assert y.shape == (1, 8) and np.all(np.abs(y) < 1.0), y
print("acme.SoftSign output", y.ravel()[:4], "...")
PY

step "kiln run through the example delegate plugin (delegate acme)"
DELEGATE_PLUGIN=$(find "$WORK/delegate_plugin" -name 'libacme_delegate.so' | head -n 1)
[ -n "$DELEGATE_PLUGIN" ] || fail "libacme_delegate.so was not built"
"$KILN" inspect "$WORK/softsign.tflite" --plugin "$KERNEL_PLUGIN" >/dev/null ||
  fail "kiln inspect with the example kernel plugin"
# The host learns why acme declined the custom op through the SDK's
# kiln.delegate_decline_reasons/1 capability.
"$KILN" inspect "$WORK/softsign.tflite" --json --plugin "$KERNEL_PLUGIN" \
    --plugin "$DELEGATE_PLUGIN" --delegate acme >"$WORK/inspect_softsign.json" ||
  fail "kiln inspect --delegate acme on the acme.SoftSign model"
python3 - "$WORK/inspect_softsign.json" <<'PY' || fail "no decline reason from acme"
import json, sys
node = json.load(open(sys.argv[1]))["subgraphs"][0]["nodes"][0]
d = node["delegate"]
assert not d["claimed"], node
assert d["reason"] == "acme: acme.SoftSign is not implemented by acme", d
print("acme declines acme.SoftSign:", d["reason"])
PY
ADD_MODEL="$MODELS_DIR/misc/add_10x10.tflite"
# Runs ADD_MODEL (y = a + b, [10, 10]) through delegate $2 of plugin $1 and
# compares the output with LiteRT's on the same inputs; the delegate must
# not fall back to the kernels.
run_delegate_against_litert() {
  local plugin=$1 name=$2 dir="$WORK/$2_run"
  mkdir -p "$dir"
  python3 -c "import numpy as np, sys; r = np.random.default_rng(7)
for n in 'ab': np.save(sys.argv[1] + '/' + n + '.npy', r.standard_normal((10, 10), dtype=np.float32))" "$dir" ||
    fail "writing inputs for $name"
  "$KILN" run "$ADD_MODEL" --plugin "$plugin" --delegate "$name" \
      --input "a=$dir/a.npy" --input "b=$dir/b.npy" --output-dir "$dir/out" \
      2>"$dir/err.txt" || { cat "$dir/err.txt"; fail "kiln run --delegate $name"; }
  if grep -qi warning "$dir/err.txt"; then
    cat "$dir/err.txt"
    fail "the $name delegate fell back to the CPU kernels"
  fi
  python3 - "$ADD_MODEL" "$dir" "$name" <<'PY' || fail "the $name delegate's output differs from LiteRT's"
import sys, numpy as np
model, d, name = sys.argv[1:]
a, b = np.load(d + "/a.npy"), np.load(d + "/b.npy")
y = np.load(d + "/out/Identity.npy")
try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:
    print("LiteRT is not installed; the output of", name, "was not compared")
    sys.exit(0)
lite = Interpreter(model_path=model)
lite.allocate_tensors()
for t in lite.get_input_details():
    lite.set_tensor(t["index"], {"a": a, "b": b}[t["name"]])
lite.invoke()
want = lite.get_tensor(lite.get_output_details()[0]["index"])
np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
print(name, "matches LiteRT on", y.shape)
PY
}
if [ -n "$MODELS_DIR" ] && [ -f "$ADD_MODEL" ]; then
  "$KILN" inspect "$ADD_MODEL" --json --plugin "$DELEGATE_PLUGIN" --delegate acme \
      >"$WORK/inspect.json" || fail "kiln inspect --delegate acme"
  python3 -c "import json,sys; n=json.load(open(sys.argv[1]))['subgraphs'][0]['nodes']; assert all(x['delegate']['claimed'] for x in n), n" \
      "$WORK/inspect.json" || fail "the acme delegate did not claim the ADD node"
  run_delegate_against_litert "$DELEGATE_PLUGIN" acme
  # acme.AcmeSettings from a settings file: skip_ops "ADD" leaves the ADD
  # node to the kernels, in text and in binary form.
  echo 'skip_ops: "ADD"' >"$WORK/acme_skip_add.txtpb"
  SETTINGS_FILES=("$WORK/acme_skip_add.txtpb")
  if command -v protoc >/dev/null 2>&1; then
    protoc --encode=acme.AcmeSettings -I "$SOURCE_DIR/sdk/examples/delegate_plugin" \
        acme_settings.proto <"$WORK/acme_skip_add.txtpb" >"$WORK/acme_skip_add.binpb" ||
      fail "protoc --encode=acme.AcmeSettings"
    SETTINGS_FILES+=("$WORK/acme_skip_add.binpb")
  fi
  for settings in "${SETTINGS_FILES[@]}"; do
    "$KILN" inspect "$ADD_MODEL" --json --plugin "$DELEGATE_PLUGIN" --delegate acme \
        --delegate-settings "$settings" >"$WORK/inspect_skip.json" ||
      fail "kiln inspect --delegate acme --delegate-settings $settings"
    python3 - "$WORK/inspect_skip.json" <<'PY' || fail "acme.AcmeSettings from $settings was not applied"
import json, sys
d = json.load(open(sys.argv[1]))["subgraphs"][0]["nodes"][0]["delegate"]
assert not d["claimed"], d
assert d["reason"] == "acme: ADD is in acme.AcmeSettings.skip_ops", d
print("acme settings applied:", d["reason"])
PY
  done
  echo 'skip_opz: "ADD"' >"$WORK/acme_bad.txtpb"
  # kiln run refuses the run; kiln inspect names the same error per node.
  if "$KILN" run "$ADD_MODEL" --plugin "$DELEGATE_PLUGIN" --delegate acme \
      --delegate-settings "$WORK/acme_bad.txtpb" --output-dir "$WORK/bad_out" \
      >/dev/null 2>"$WORK/bad.txt"; then
    fail "a bad acme.AcmeSettings file was accepted"
  fi
  "$KILN" inspect "$ADD_MODEL" --plugin "$DELEGATE_PLUGIN" --delegate acme \
      --delegate-settings "$WORK/acme_bad.txtpb" >>"$WORK/bad.txt" 2>&1 ||
    fail "kiln inspect with a bad settings file"
  grep -q "acme_bad.txtpb' (text, by its extension): not valid acme.AcmeSettings text format" \
      "$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "the bad settings file's error"; }
  GUIDE_PLUGIN="$WORK/guide_delegate/libmy_npu.so"
  "$KILN" inspect "$ADD_MODEL" --json --plugin "$GUIDE_PLUGIN" --delegate my_npu \
      >"$WORK/inspect_my_npu.json" || fail "kiln inspect --delegate my_npu"
  python3 -c "import json,sys; n=json.load(open(sys.argv[1]))['subgraphs'][0]['nodes']; assert all(x['delegate']['claimed'] for x in n), n" \
      "$WORK/inspect_my_npu.json" || fail "the vendor guide's delegate did not claim the ADD node"
  run_delegate_against_litert "$GUIDE_PLUGIN" my_npu
else
  echo "shared models not found; the delegate example was validated but not run"
fi

step "all out-of-tree SDK checks passed"
