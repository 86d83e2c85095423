# Exports and the MCP server: how the memory reaches agents.
# Generated projections for agents that read files; never private, query-only or inactive records.
step git memzoi export okf --output "$WORK/bundle"
# The bundle imports back as proposals; against the memory it came from, the plan is all "unchanged".
step git memzoi import --from okf "$WORK/bundle/okf"
step git memzoi export agents-md
# Past a cap, the most severe entries stay and the rest are listed as left out.
step git memzoi export agents-md --max-bytes 12000
claude_md="$(git memzoi export claude-md 2>/dev/null)"
step head -n 12 "$claude_md"

# A ready MCP client configuration, then the server itself, driven by the SDK's stdio client.
step git memzoi mcp config --client claude
step git memzoi mcp config --client codex
step python - <<'PY'
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
import os

async def main() -> None:
    params = StdioServerParameters(command="git", args=["memzoi", "mcp", "serve"], cwd=os.getcwd(),
                                   env={k: v for k, v in os.environ.items() if k.startswith(("MEMZOI_", "GIT_"))})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        print("tools:", ", ".join(sorted(t.name for t in (await client.list_tools()).tools)))
        result = await client.call_tool("search_memory", {"query": "content classification", "limit": 2})
        print(result.content[0].text)
        result = await client.call_tool("inspect_memory_expiry", {"record_id": "rust-msrv-is-1-96-1"})
        print(result.content[0].text)

anyio.run(main)
PY
