"""Accounts on the web: sign-in pages, sessions and bearer tokens, guards, and CLI commands."""
