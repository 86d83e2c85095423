#!/usr/bin/env bash
# The main job end to end on a throwaway repository: creates .venv if needed, installs git memzoi,
# and prints each command it runs with what it answered. Nothing outside a temp folder is touched.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/scripts/_venv.sh"
ensure_venv
export PATH="$ROOT/.venv/bin:$PATH"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/memzoi-demo.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export MEMZOI_HOME="$WORK/memzoi-home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$WORK/gitconfig"
git config --file "$GIT_CONFIG_GLOBAL" user.name "Demo User"
git config --file "$GIT_CONFIG_GLOBAL" user.email "demo@example.com"
git config --file "$GIT_CONFIG_GLOBAL" init.defaultBranch main

step() { printf '\n$ %s\n' "$*"; "$@"; }

cd "$WORK"
git init -q project && cd project
echo "# demo project" > README.md && git add README.md && git commit -qm "initial"

step git memzoi init
step git memzoi doctor
# Memory another implementation of the profile published: it validates unchanged.
cp "$ROOT"/fixtures/interop/memzoi-self-memory/.memzoi/records/*.md .memzoi/records/
step git memzoi validate
git add -A && git commit -qm "import published memory"
step git memzoi validate --rev HEAD

# Each capability adds its part of the tour in scripts/demo.d/, run in name order.
for part in "$ROOT"/scripts/demo.d/*.sh; do
  [ -e "$part" ] || continue
  printf '\n## %s\n' "$(basename "$part" .sh)"
  . "$part"
done

printf '\ndemo finished: every step above ran against %s\n' "$WORK/project"
