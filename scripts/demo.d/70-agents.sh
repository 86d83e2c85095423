# Coding agents: one command wires the MCP server and the hooks into Claude Code, Codex or
# Gemini CLI; the hook then answers each client's events from memory.
step git memzoi agent install claude --dry-run
step git memzoi agent install claude
step git memzoi agent install claude              # a second run changes nothing
mkdir -p .codex && printf '# my Codex settings\nmodel = "o3"\n' > .codex/config.toml
step git memzoi agent install codex                # merged: the user's settings stay
step cat .codex/config.toml .codex/hooks.json
step git memzoi agent install gemini

# Before an edit of a path a risk record covers, Claude Code asks the user and Claude reads why.
edit_event() {
  printf '{"session_id": "demo", "cwd": "%s", "hook_event_name": "PreToolUse", "tool_name": "Edit",
    "tool_input": {"file_path": "%s/%s", "old_string": "a", "new_string": "b"}}' "$PWD" "$PWD" "$1"
}
edit_event deploy/pipeline.yml > "$WORK/edit-event.json"
step git memzoi agent hook claude < "$WORK/edit-event.json"
edit_event README.md > "$WORK/quiet-event.json"
step git memzoi agent hook claude < "$WORK/quiet-event.json"   # nothing applies: no output
# Codex sends the same shape of event; a file edit arrives as an apply_patch of the whole patch.
printf '{"session_id": "demo-codex", "cwd": "%s", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
  "tool_input": {"command": "*** Begin Patch\\n*** Update File: deploy/pipeline.yml\\n@@\\n-a\\n+b\\n*** End Patch"}}' \
  "$PWD" > "$WORK/codex-event.json"
step git memzoi agent hook codex < "$WORK/codex-event.json"
printf '{"session_id": "demo", "cwd": "%s", "hook_event_name": "SessionStart", "source": "startup"}' "$PWD" \
  > "$WORK/session-event.json"
git memzoi agent hook claude < "$WORK/session-event.json" \
  | python -c 'import json, sys; print(json.load(sys.stdin)["hookSpecificOutput"]["additionalContext"][:600])'

# The server also serves each record as a resource and offers context_pack and handoff prompts.
step python - <<'PY'
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
import os

async def main() -> None:
    params = StdioServerParameters(command="git", args=["memzoi", "mcp", "serve"], cwd=os.getcwd(),
                                   env={k: v for k, v in os.environ.items() if k.startswith(("MEMZOI_", "GIT_", "PATH"))})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        resources = (await client.list_resources()).resources
        print(len(resources), "record resources, e.g.", resources[0].uri)
        read = await client.read_resource(resources[0].uri)
        print(read.contents[0].text[:200])
        print("prompts:", ", ".join(p.name for p in (await client.list_prompts()).prompts))

anyio.run(main)
PY
