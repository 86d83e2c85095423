#!/usr/bin/env bash
# Run every test: creates .venv if needed, installs git memzoi with its test extras, runs pytest.
# Extra arguments go to pytest (e.g. scripts/test.sh -k search -x).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv test
export PATH="$PWD/.venv/bin:$PATH"
workers=()
if .venv/bin/python -c "import xdist" 2>/dev/null; then workers=(-n "${MEMZOI_TEST_WORKERS:-auto}"); fi
exec .venv/bin/python -m pytest "${workers[@]}" "$@"
