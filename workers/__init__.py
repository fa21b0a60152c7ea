"""Lookout's Celery workers: `celery -A workers worker --pool threads` finds `workers.celery`."""

from workers.celery_app import celery

__all__ = ["celery"]
