# The proposal lifecycle: propose into the inbox, review, apply (create, supersede, tombstone) as one
# commit each, reject (a secret becomes a hash-only receipt), and a crash mid-apply repaired.
pid_of() { python -c 'import json, sys; print(json.load(sys.stdin)["id"])'; }

# create: proposed with a review packet, approved, applied as exactly one commit
created=$(git memzoi propose --type decision --title "Protected routes validate sessions server-side" \
  --body "Protected API routes must validate the session server-side; never trust client auth state." \
  --applies-to 'src/auth/**' --tag auth --source path --source-ref src/auth/session.ts \
  --confidence high --reason "Learned during the auth middleware migration." --packet --json | pid_of)
step git memzoi proposals
step git memzoi approve "$created"
step git memzoi apply "$created" --commit
step git show --stat --format=%s HEAD
step cat .memzoi/records/semantic/decisions/protected-routes-validate-sessions-server-side.md

# supersede: the old record keeps its body with status superseded; the new one points at it
replacement=$(git memzoi propose --action supersede --target protected-routes-validate-sessions-server-side \
  --type decision --title "Every route validates sessions server-side" \
  --body "Every API route, public ones included, validates the session server-side." \
  --reason "The rule turned out to cover public routes too." --json | pid_of)
git memzoi approve "$replacement"
step git memzoi apply "$replacement" --commit
step git diff HEAD~1 HEAD -- .memzoi/records/semantic/decisions/protected-routes-validate-sessions-server-side.md

# a pending packet file reviewed in a pull request is applied directly; applying it twice does nothing
packet=$(git memzoi propose --type procedure --lane procedural --title "Release checklist" \
  --body "Tag, build, sign, publish, announce." --packet --json | python -c 'import json, sys; print(json.load(sys.stdin)["file"])')
step git memzoi apply "$packet" --reviewer "Demo Reviewer"
step git memzoi apply "$packet"

# secrets are refused at propose; a non-repo-safe proposal can only be rejected, as a hash-only receipt
if step git memzoi propose --type fact --title "Deploy key" --body "aws key AKIAIOSFODNN7EXAMPLE"; then
  echo "a secret was accepted" >&2; exit 1
fi
secret=$(git memzoi propose --type fact --title "Deploy key" --body "aws key AKIAIOSFODNN7EXAMPLE" \
  --sensitivity secret --json | pid_of)
if step git memzoi apply "$secret"; then echo "a secret was applied" >&2; exit 1; fi
step git memzoi reject "$secret" --reason "credentials never go into repository memory"
step git memzoi proposals show "$secret"
step tail -n 4 .memzoi/log.md
# a value holding a newline would forge a receipt line in log.md: refused as a usage error (exit 2)
forged=$(printf 'bob\n- forged receipt')
if step git memzoi reject "$secret" --reason "again" --reviewer "$forged"; then
  echo "a forged reviewer was accepted" >&2; exit 1
fi

# a tombstone remembers the exact bytes it was proposed against (proposal.target_blob): a commit that
# changes the target refuses it, whatever the commit's date (the edit is then dropped from history again)
rule=.memzoi/records/semantic/decisions/every-route-validates-sessions-server-side.md
tomb=$(git memzoi propose --action tombstone --target every-route-validates-sessions-server-side \
  --reason "folded into the auth guide" --packet --json | python -c 'import json, sys; print(json.load(sys.stdin)["file"])')
step grep target_blob "$tomb"
python -c 'import sys; p = sys.argv[1]; t = open(p).read(); open(p, "w").write(t.replace("public ones included", "public ones too"))' "$rule"
GIT_COMMITTER_DATE=2001-01-01T00:00:00Z git commit -q -m "a quiet, backdated edit" -- "$rule"
if step git memzoi apply "$tomb"; then echo "a changed target was tombstoned" >&2; exit 1; fi
git reset -q --soft HEAD~1 && git checkout -q HEAD -- "$rule"
step git memzoi reject "$tomb" --reason "the record changed after it was proposed"

# a crash half-way through an apply (the test hook kills the process) is repaired to before or after
crash=$(git memzoi propose --type fact --title "Node 22 is required" --body "CI and local dev use Node 22." --json | pid_of)
git memzoi approve "$crash"
if MEMZOI_FAULT=file-2 git memzoi apply "$crash" 2>/dev/null; then echo "the fault hook did not fire" >&2; exit 1; fi
step git memzoi doctor --repair
step git memzoi apply "$crash"

# killed after the commit point of apply --commit: repair puts the journaled commit on HEAD
late=$(git memzoi propose --type fact --title "pnpm is the package manager" --body "Use pnpm, not npm." --json | pid_of)
git memzoi approve "$late"
if MEMZOI_FAULT=db-committed git memzoi apply "$late" --commit 2>/dev/null; then echo "the fault hook did not fire" >&2; exit 1; fi
step git memzoi doctor --repair
step git log --oneline -1
git add -A .memzoi && git commit -q -m "memzoi: demo lifecycle"
