# Private local memory and session checkpoints in shared.db, shared with a linked worktree;
# an authorised episodic extension; promotion through review; the audit event stream.
local_id=$(git memzoi local add --type fact --title "Tests need uv" --applies-to 'tests/**' \
  --body "Run uv sync before pytest; pip install is too slow here.")
echo "stored $local_id"
git worktree add -q ../project-agent-b -b agent-b
step git -C ../project-agent-b memzoi local list
step git -C ../project-agent-b memzoi search "uv sync" --include-local
step git -C ../project-agent-b memzoi search "uv sync"
cp_id=$(git memzoi checkpoint add --task "Speed up the test suite" \
  --note "Profiled: fixture setup dominates. Next: cache the repo fixture.")
step git -C ../project-agent-b memzoi checkpoint continue "$cp_id"
step git memzoi checkpoint list
step git memzoi checkpoint close "$cp_id"
step git memzoi checkpoint add --task "Speed up the test suite" --note "Picked up after close." --successor-of "$cp_id"
incident=$(git memzoi local add --lane episodic --type incident --title "CI runners ran out of disk" \
  --body "The runners filled /tmp with build caches; cleared them by hand.")
step git memzoi retention extend "$incident" --until "$(python -c 'import datetime as d; print((d.datetime.now(d.timezone.utc) + d.timedelta(days=45)).strftime("%Y-%m-%dT%H:%M:%SZ"))')" \
  --reason "the disk issue may come back with the next release"
step git memzoi expiry "$incident"
step git memzoi local promote "$local_id" --sensitivity repo-safe
step git memzoi proposals
step git memzoi events --limit 12
git worktree remove --force ../project-agent-b
git branch -q -D agent-b
