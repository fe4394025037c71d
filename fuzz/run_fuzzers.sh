#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ for a bounded time under ASan and
# UBSan, and fails when any finds a crash, a sanitizer report, a leak, a
# timeout (a hang) or an out-of-memory.
#
#   fuzz/run_fuzzers.sh [SECONDS_PER_TARGET=60] [TARGET...]
#
# Targets: model npy delegate_settings plugin_descriptor plugin_elf (all by
# default). Builds the `fuzz` preset (build-fuzz/, clang) first. Each
# target's corpus starts from its checked-in seeds (fuzz/corpus/<target>)
# and regressions (fuzz/regressions/<target>), plus, copied at run time and
# never checked in: the models of ../shared/models and those `kiln
# build-example` writes (model), the build's test plugins (plugin_elf).
# The corpus grows in build-fuzz/fuzz-work/corpus/<target> across runs.
# Seed models are those under 64 KB (larger ones mostly cost time).
#
# A finding is left in build-fuzz/fuzz-work/artifacts/<target>/; with
# KILN_FUZZ_SAVE=1 it is also copied to fuzz/regressions/<target>/, where
# the default build's test fuzz.replay.<target> replays it: commit it with
# the fix.
#
# Environment: KILN_FUZZ_BUILD (build dir), KILN_FUZZ_JOBS (build jobs, 2),
# KILN_FUZZ_TIMEOUT (seconds one input may run before it counts as a hang,
# 25),
# KILN_FUZZ_NICE (19), KILN_SHARED_MODELS (../shared/models),
# KILN_FUZZ_KILN (a kiln CLI for build-example seeds; build/bin/kiln).
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
if [ "${#TARGETS[@]}" -eq 0 ]; then
  TARGETS=(model npy delegate_settings plugin_descriptor plugin_elf)
fi
BUILD="${KILN_FUZZ_BUILD:-$ROOT/build-fuzz}"
JOBS="${KILN_FUZZ_JOBS:-2}"
NICE="${KILN_FUZZ_NICE:-19}"
MODELS="${KILN_SHARED_MODELS:-$ROOT/../shared/models}"
KILN="${KILN_FUZZ_KILN:-$ROOT/build/bin/kiln}"
WORK="$BUILD/fuzz-work"
# Seconds one input may take (sanitizers make kernels 10-50x slower, and a
# shared machine slower still).
TIMEOUT="${KILN_FUZZ_TIMEOUT:-25}"

case "$SECONDS_PER_TARGET" in
  ''|*[!0-9]*) echo "run_fuzzers.sh: seconds must be a number, got '$SECONDS_PER_TARGET'" >&2; exit 2 ;;
esac

# ---- Build -------------------------------------------------------------------
if ! command -v clang++ >/dev/null; then
  echo "run_fuzzers.sh: clang++ not found; install it: sudo apt-get install clang" >&2
  exit 2
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  (cd "$ROOT" && cmake --preset fuzz -B "$BUILD") >"$BUILD.configure.log" 2>&1 || {
    cat "$BUILD.configure.log" >&2; echo "run_fuzzers.sh: configure failed" >&2; exit 2; }
fi
build_targets=(kiln_plugin_cpu)
for t in "${TARGETS[@]}"; do build_targets+=("kiln_fuzz_$t"); done
nice -n "$NICE" cmake --build "$BUILD" -j "$JOBS" --target "${build_targets[@]}" || {
  echo "run_fuzzers.sh: build failed" >&2; exit 2; }

# ---- Seeds -------------------------------------------------------------------
seed() {  # seed TARGET FILE...: copy files into the target's corpus
  local target="$1"; shift
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp -f "$f" "$WORK/corpus/$target/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
  done
}

for t in "${TARGETS[@]}"; do
  mkdir -p "$WORK/corpus/$t" "$WORK/artifacts/$t"
  for dir in "$ROOT/fuzz/corpus/$t" "$ROOT/fuzz/regressions/$t"; do
    [ -d "$dir" ] && seed "$t" "$dir"/*
  done
  case "$t" in
    model)
      if [ -d "$MODELS" ]; then
        while IFS= read -r -d '' f; do seed model "$f"; done < <(
          find "$MODELS" -type f \( -name '*.tflite' -o -name '*.bin' \) -size -64k -print0)
      fi
      if [ -x "$KILN" ]; then
        gen="$WORK/generated"; mkdir -p "$gen"
        "$KILN" build-example "$gen/example_cnn.tflite" >/dev/null 2>&1
        for op in RELU TANH LOGISTIC ABS NEG SQRT EXP; do
          "$KILN" build-example --single-op "$op" "$gen/single_$op.tflite" >/dev/null 2>&1
        done
        seed model "$gen"/*.tflite
      fi
      ;;
    plugin_elf)
      for dir in "$ROOT/build/lib/kiln/test_plugins" "$ROOT/build/lib/kiln/plugins"; do
        [ -d "$dir" ] || continue
        while IFS= read -r -d '' f; do seed plugin_elf "$f"; done < <(
          find "$dir" -maxdepth 1 -name '*.so' -size -100k -print0)
      done
      ;;
  esac
done

# ---- Run ---------------------------------------------------------------------
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export KILN_PLUGIN_PATH=
# Findings libFuzzer wrote for a target (its slow-unit-* notes are not).
findings() {
  find "$WORK/artifacts/$1" -maxdepth 1 -type f \( -name 'crash-*' -o \
    -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l
}
failed=()
summary=()
for t in "${TARGETS[@]}"; do
  bin="$BUILD/bin/kiln_fuzz_$t"
  log="$WORK/$t.log"
  echo "== $t: ${SECONDS_PER_TARGET}s, corpus $(ls "$WORK/corpus/$t" | wc -l) inputs"
  before=$(findings "$t")
  nice -n "$NICE" "$bin" "$WORK/corpus/$t" \
    -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" \
    -rss_limit_mb=2560 -malloc_limit_mb=2048 \
    -artifact_prefix="$WORK/artifacts/$t/" -print_final_stats=1 \
    >"$log" 2>&1
  rc=$?
  after=$(findings "$t")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
    failed+=("$t")
    summary+=("$(printf '%-18s FAIL  rc=%s  execs=%s' "$t" "$rc" "${execs:-?}")")
    echo "-- $t found something (exit $rc); the report:"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written|deadly signal|timeout|out-of-memory" "$log" | head -20
    tail -40 "$log" | sed 's/^/   | /'
    if [ "${KILN_FUZZ_SAVE:-0}" = 1 ]; then
      mkdir -p "$ROOT/fuzz/regressions/$t"
      find "$WORK/artifacts/$t" -maxdepth 1 -type f ! -name 'slow-unit-*' \
        -exec cp {} "$ROOT/fuzz/regressions/$t/" \;
      echo "-- copied to fuzz/regressions/$t/"
    fi
  else
    summary+=("$(printf '%-18s ok    execs=%s  corpus=%s' "$t" "${execs:-?}" "$(ls "$WORK/corpus/$t" | wc -l)")")
  fi
done

echo
echo "== fuzz summary (${SECONDS_PER_TARGET}s per target)"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]} (artifacts in $WORK/artifacts/; logs in $WORK/*.log)"
  exit 1
fi
echo "PASSED"
