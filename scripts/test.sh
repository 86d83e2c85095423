#!/usr/bin/env bash
# Run every test: creates .venv if needed, installs git memzoi with its test extras, runs pytest
# with coverage of the package (settings in pyproject.toml), and prints the coverage figure.
# Extra arguments go to pytest (e.g. scripts/test.sh -k search -x). MEMZOI_TEST_WORKERS sets the
# number of parallel workers (default: one per core); MEMZOI_COVERAGE=0 leaves coverage out.
# --fast runs the fast tier for the edit-test loop: every test but the marked slow tiers (the
# markers are registered in pyproject.toml; tests/project/test_tiers.py checks the tier still
# reaches every package), without coverage unless MEMZOI_COVERAGE=1 asks for it (a part of the
# suite gives no meaningful figure). CI (.ci/run) runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
fast_tier='not slow and not crash and not bench and not clients'
args=()
coverage_default=1
for arg in "$@"; do
  if [ "$arg" = --fast ]; then args+=(-m "$fast_tier"); coverage_default=0; else args+=("$arg"); fi
done
. scripts/_venv.sh
ensure_venv test
export PATH="$PWD/.venv/bin:$PATH"
# The whole run gets a HOME and MEMZOI_HOME of its own, so that using git memzoi (or anything that
# writes under ~) while the tests run can neither disturb them nor be disturbed; the tests' guard
# watches this home (tests/conftest.py) and checks that the run has one (MEMZOI_TEST_HOME).
# The real agent clients (tests/clients/test_clients.py) stay cached in the user's home across runs.
export MEMZOI_CLIENTS_CACHE="${MEMZOI_CLIENTS_CACHE:-$HOME/.cache/memzoi-clients}"
run_home="$(mktemp -d "${TMPDIR:-/tmp}/memzoi-test-home.XXXXXX")"
trap 'rm -rf "$run_home"' EXIT
export MEMZOI_TEST_HOME="$run_home" HOME="$run_home" MEMZOI_HOME="$run_home/.memzoi"
workers=()
if .venv/bin/python -c "import xdist" 2>/dev/null; then workers=(-n "${MEMZOI_TEST_WORKERS:-auto}"); fi
coverage=()
if [ "${MEMZOI_COVERAGE:-$coverage_default}" != 0 ]; then
  # an absolute data file: tests run the program in repositories of their own, as the cwd
  export COVERAGE_FILE="$PWD/.coverage"
  coverage=(--cov --cov-report=)
fi
status=0
.venv/bin/python -m pytest "${workers[@]}" "${coverage[@]}" ${args[@]+"${args[@]}"} || status=$?
if [ ${#coverage[@]} -gt 0 ] && [ -f .coverage ]; then
  echo "coverage of git_memzoi (lines, in-process and subprocess): $(.venv/bin/python -m coverage report --format=total)%"
fi
exit "$status"
