"""The parts of the citation check (``tools.citation_checks``): markers, words, facts, passages."""
