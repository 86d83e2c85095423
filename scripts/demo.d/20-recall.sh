# Recall: the index builds itself from the 35 published records, rebuilds incrementally, and
# serves search (any text is a safe query), context packs, precheck, handoff and expiry.
step git memzoi rebuild --full
step git memzoi rebuild
step git memzoi search "rebuild runtime index" --limit 2
# FTS operators, quotes and punctuation are just words: no error, and a plain word still matches
step git memzoi search --limit 1 -- '"unbalanced -x/y.z AND NOT runtime*'
step git memzoi search --all "Rebuild runtime index after applying proposal files" --limit 1

# A reviewed risk, applied as one commit, is found by the very next read: no rebuild needed.
risk=$(git memzoi propose --type risk --title "Force pushes break the deploy pipeline" \
  --body "The deploy pipeline reads main directly: never force-push to main, revert instead." \
  --applies-to 'deploy/**' --source pr --source-ref pr://42 --confidence high \
  --reason "Learned from the March outage." --json | python -c 'import json, sys; print(json.load(sys.stdin)["id"])')
git memzoi approve "$risk" >/dev/null
git memzoi apply "$risk" --commit >/dev/null
step git memzoi search "force push" --path deploy/pipeline.yml
step git memzoi precheck --command "git push --force origin main"
if step git memzoi precheck --path deploy/pipeline.yml --exit-code; then
  echo "precheck --exit-code should have said no" >&2; exit 1
fi
step git memzoi context --task "change the deploy pipeline" --path deploy/pipeline.yml --budget 120
step git memzoi handoff --task "change the deploy pipeline"

# Retention: durable lanes have no age limit; an episodic record turns query-only after 30 days.
step git memzoi expiry rust-msrv-is-1-96-1
incident=$(git memzoi propose --type incident --lane episodic --occurred-at 2026-01-10T00:00:00Z \
  --title "January cache outage" --body "The cache cluster ran out of memory during the January release." \
  --reason "Incident notes." --json | python -c 'import json, sys; print(json.load(sys.stdin)["id"])')
git memzoi approve "$incident" >/dev/null
git memzoi apply "$incident" --commit >/dev/null
incident_id=$(git memzoi search --json "January cache outage" --all | python -c 'import json, sys; print(json.load(sys.stdin)["hits"][0]["record_id"])')
step env MEMZOI_NOW=2026-02-08T23:59:59Z git memzoi expiry "$incident_id"
step env MEMZOI_NOW=2026-02-09T00:00:00Z git memzoi expiry "$incident_id"
step env MEMZOI_NOW=2026-02-09T00:00:00Z git memzoi search "cache outage"
step env MEMZOI_NOW=2026-02-09T00:00:00Z git memzoi search --all "cache outage"
