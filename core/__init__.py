"""Lookout's core: what the web app and the workers both stand on — settings, extensions,
models, the turn, the broker's names, metrics, quotas and limits, the plugin host and streams.

Neither door imports the other: ``webapp`` (pages and APIs) and ``workers`` (Celery tasks)
import ``core`` and ``tools``; ``core`` imports neither door (``tests/test_boundaries.py``).
"""
