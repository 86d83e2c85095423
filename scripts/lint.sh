#!/usr/bin/env bash
# Lint and type-check: ruff's rules, ruff's format, mypy --strict on the package (settings in
# pyproject.toml). Creates .venv with the test extras if needed, as scripts/test.sh does.
# Fix what ruff can with: .venv/bin/ruff check --fix . && .venv/bin/ruff format .
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv test
status=0
echo "== ruff check"
.venv/bin/ruff check . || status=1
echo "== ruff format --check"
.venv/bin/ruff format --check . || status=1
echo "== mypy --strict git_memzoi"
.venv/bin/mypy --strict git_memzoi || status=1
exit "$status"
