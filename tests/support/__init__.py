"""Helpers the fixtures are built from: processes, private Redis servers, workers, databases."""
