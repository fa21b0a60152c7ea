"""Lookout as an MCP server: ``/mcp`` offers a user's guarded web tools to other agents."""
