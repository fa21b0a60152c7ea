"""Lookout's plugin API, the guarded fetch and the built-in plugins."""
