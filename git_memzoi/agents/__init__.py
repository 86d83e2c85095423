"""Wiring git memzoi into coding agents: Claude Code hooks and client configuration."""
