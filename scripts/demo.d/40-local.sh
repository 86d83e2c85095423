# Private local memory and session checkpoints, shared with a linked worktree; audit events.
step git memzoi local add --type fact --title "Tests need uv" --body "Run uv sync before pytest; pip install is too slow here." --applies-to tests/**
git worktree add -q ../project-agent-b -b agent-b
step git -C ../project-agent-b memzoi local list
cp_id=$(git memzoi checkpoint add --task "Speed up the test suite" --note "Profiled: fixture setup dominates. Next: cache the repo fixture.")
step git -C ../project-agent-b memzoi checkpoint continue "$cp_id"
step git memzoi checkpoint list
step git memzoi checkpoint close "$cp_id"
step git memzoi checkpoint add --task "Speed up the test suite" --note "Picked up after close." --successor-of "$cp_id"
step git memzoi events --limit 6
git worktree remove --force ../project-agent-b
