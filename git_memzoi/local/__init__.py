"""Private local memory, session checkpoints, episodic extensions, promotion and the audit log in shared.db."""
