#!/usr/bin/env bash
# Builds and installs the Python package `kiln` the way users do, in a fresh
# virtual environment, then runs its pytest tests there.
#
#   run_python_tests.sh install SOURCE_DIR VENV_DIR
#       python3 -m venv --clear VENV_DIR; pip install SOURCE_DIR (the wheel
#       build keeps SOURCE_DIR/build-python between runs); pip install
#       pytest and ai-edge-litert (the oracle of the compatibility tests).
#       Exit 77 (skipped) when PyPI cannot be reached for the build tools.
#   run_python_tests.sh test VENV_DIR TEST_FILE...
#       runs pytest on TEST_FILE(s) with VENV_DIR's python, from outside the
#       source tree (so `import kiln` is the installed package). Exit 77
#       (skipped) when every test skipped (no corpus / no LiteRT).
set -euo pipefail

mode=${1:-}
case "$mode" in
  install)
    [ $# -eq 3 ] || { echo "usage: $0 install SOURCE_DIR VENV_DIR" >&2; exit 2; }
    SOURCE_DIR=$(cd "$2" && pwd)
    VENV=$3
    PY=${PYTHON:-python3}
    "$PY" -m venv --clear "$VENV"
    PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
    if ! "${PIP[@]}" install "scikit-build-core>=0.10" "nanobind>=2.4"; then
      echo "SKIPPED: cannot install the build tools (scikit-build-core, nanobind) from PyPI"
      exit 77
    fi
    # The wheel build compiles with at most two jobs unless told otherwise,
    # with the compilers a plain CMake configure picks (cc, c++), so that
    # ccache reuses the objects of the build/ tree (ccache keys include the
    # compiler's name).
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
    export CC=${CC:-cc} CXX=${CXX:-c++}
    start=$(date +%s)
    "${PIP[@]}" install --no-build-isolation "$SOURCE_DIR"
    echo "pip install $SOURCE_DIR: $(( $(date +%s) - start )) s"
    "${PIP[@]}" install pytest ||
      { echo "SKIPPED: cannot install pytest from PyPI"; exit 77; }
    "${PIP[@]}" install ai-edge-litert ||
      echo "note: ai-edge-litert could not be installed; the LiteRT tests will skip"
    # The package must import from outside the source tree and find its
    # plugins inside itself.
    (cd "$VENV" && bin/python -c "import kiln, json; print(json.dumps(kiln.version_info(), indent=1)); assert any(r['loaded'] and r['name'] == 'kiln_cpu' for r in kiln.probe_plugins()), 'the installed package found no CPU plugin'")
    ;;
  test)
    [ $# -ge 3 ] || { echo "usage: $0 test VENV_DIR TEST_FILE..." >&2; exit 2; }
    VENV=$(cd "$2" 2>/dev/null && pwd) || VENV=$2
    shift 2
    if ! (cd / && "$VENV/bin/python" -c "import kiln") 2>/dev/null; then
      echo "SKIPPED: $VENV has no installed kiln package (see python.install)"
      exit 77
    fi
    files=()
    for f in "$@"; do files+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    status=0
    (cd "$VENV" && bin/python -m pytest -rs -p no:cacheprovider "${files[@]}") | tee "$log" ||
      status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] || exit "$status"
    if ! grep -Eq "[0-9]+ passed" "$log"; then
      echo "SKIPPED: no test ran (see the skip reasons above)"
      exit 77
    fi
    ;;
  *)
    echo "usage: $0 install SOURCE_DIR VENV_DIR | test VENV_DIR TEST_FILE..." >&2
    exit 2
    ;;
esac
