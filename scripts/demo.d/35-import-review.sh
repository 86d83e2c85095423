# Memory a team already keeps, brought in as reviewable proposals; where memory stands; IDs by prefix.
# (sourced by scripts/demo.sh, in the demo project)
mkdir -p services/api
cat > AGENTS.md <<'MD'
# Project rules

## Package manager

Use pnpm for every install; never npm or yarn.

## Releases

Tag releases from main only, after CI is green.
MD
printf '# API\n\n## Errors\n\nReturn RFC 7807 problem documents from every handler.\n' > services/api/AGENTS.md
ln -sf AGENTS.md CLAUDE.md
git add AGENTS.md CLAUDE.md services/api/AGENTS.md && git commit -q -m "agent instructions"
step git memzoi import
step git memzoi import --apply --commit
step git memzoi import                       # a second run plans nothing
step git memzoi search "rfc 7807 errors"
step git memzoi export agents-md --into AGENTS.md
step git memzoi import                       # the block written back is not imported again
git checkout -q -- AGENTS.md
step git memzoi show package              # a unique prefix of an ID will do
step git memzoi status
