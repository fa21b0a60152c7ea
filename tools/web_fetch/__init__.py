"""The web_fetch plugin: guarded, domain-limited reading of pages and documents."""
