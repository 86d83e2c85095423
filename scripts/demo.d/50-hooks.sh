# Git hooks: a server that refuses pushes breaking the memory rules, client hooks, and aliases.
# A bare "server" repository with git memzoi's pre-receive hook, seeded from this project.
step git init -q --bare ../server.git
step git -C ../server.git memzoi hook install
step git push -q ../server.git HEAD:refs/heads/main
git clone -q ../server.git ../clone

# Editing a canonical record in place is refused at the server; its branch does not move.
record=$(cd ../clone && ls .memzoi/records/*.md | head -n 1)
printf 'One more sentence, edited in place.\n' >> "../clone/$record"
git -C ../clone commit -q -m "Edit a record in place" -- "$record"
if step git -C ../clone push -q origin main; then echo "the server accepted an in-place edit" >&2; exit 1; fi
git -C ../clone reset -q --hard origin/main

# CI runs the same checks over a range; a branch cannot relax the policy it is judged by.
git -C ../clone checkout -q -b relax
printf '[hooks]\nallow_in_place_edits = true\n' > ../clone/.memzoi/config.toml
printf 'Reworded on a branch that allows it.\n' >> "../clone/$record"
git -C ../clone add -A && git -C ../clone commit -q -m "Allow in-place edits, then edit"
if step git -C ../clone memzoi hook check origin/main..HEAD; then echo "a branch relaxed its own policy" >&2; exit 1; fi
git -C ../clone checkout -q main

# The reviewed way goes through: a tombstone proposal, approved, applied as one commit, pushed.
target=$(basename "$record" .md)
proposal=$(git -C ../clone memzoi propose --action tombstone --target "$target" \
  --reason "superseded by the current release process" --json \
  | python -c 'import json, sys; print(json.load(sys.stdin)["id"])')
git -C ../clone memzoi approve "$proposal"
step git -C ../clone memzoi apply "$proposal" --commit
step git -C ../clone push -q origin main

# Client hooks: pre-commit checks what is staged, pre-push runs the server's checks early.
step git -C ../clone memzoi hook install
cp "../clone/$record" ../clone/.memzoi/records/deploy-notes.md
sed -i 's/^id: .*/id: deploy-notes/' ../clone/.memzoi/records/deploy-notes.md
printf 'Deploy with postgres://deploy:Tr0ub4dor-3@db.internal/app\n' >> ../clone/.memzoi/records/deploy-notes.md
git -C ../clone add .memzoi/records/deploy-notes.md
if step git -C ../clone commit -q -m "Add deploy notes"; then echo "pre-commit accepted a secret" >&2; exit 1; fi
git -C ../clone rm -q -f .memzoi/records/deploy-notes.md

# A commit or push of code alone is answered by git before the checks load; pushing by URL to
# a new branch checks only the commits no remote-tracking ref reaches (at most the 200 newest).
printf 'print("hello")\n' > ../clone/app.py
git -C ../clone add app.py
step git -C ../clone commit -q -m "Add app.py"
step git -C ../clone push -q "$PWD/../server.git" HEAD:refs/heads/app

# Aliases make memory commands read like git's own; -h works on every command.
git -C ../clone config alias.memory-check 'memzoi validate'
git -C ../clone config alias.recall 'memzoi search'
step git -C ../clone memory-check
step git -C ../clone recall "content classification" --limit 2
step git memzoi hook install -h
