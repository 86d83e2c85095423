"""Import the memory a repository already keeps (AGENTS.md, CLAUDE.md, Cursor, Copilot, ADRs) as proposals."""
