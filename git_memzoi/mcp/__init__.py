"""The MCP server: read-only tools over recall, served on the official SDK over stdio.

`mcp.server` is the only module that imports the SDK; `mcp.tools` and `mcp.clientconfig` stay
light so `git memzoi mcp config` and every other command start without it.
"""
