# Sourced by scripts/*.sh: make .venv (Python 3.11+) and install the package into it.
# Usage: ensure_venv [extras]
ensure_venv() {
  local extras="${1:-}"
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if [ ! -x "$root/.venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$root/.venv"
  fi
  local spec="$root"
  [ -n "$extras" ] && spec="$root[$extras]"
  "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec" 2>&1 \
    | grep -v "^WARNING: Location" || true
  "$root/.venv/bin/python" -c "import git_memzoi" >/dev/null
}
