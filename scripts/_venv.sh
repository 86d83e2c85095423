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
  link_manpage "$root/.venv"
}

# pip install -e installs no data-files, so `man git-memzoi` (and `git memzoi --help`) would find
# no page. man looks in <dir>/../share/man for each <dir> on PATH: link the page there, from the
# source tree, so a regenerated page is seen at once.
# Usage: link_manpage VENV
link_manpage() {
  local root page target
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  page="$root/git_memzoi/man/git-memzoi.1"
  target="$1/share/man/man1"
  mkdir -p "$target"
  ln -sfn "$page" "$target/git-memzoi.1"
}
