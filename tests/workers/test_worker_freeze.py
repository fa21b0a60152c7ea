"""A ready worker leaves what it has loaded out of the cycle collector's walks (issue 29: each
full collection of a turn walked every module, mapper and schema of the process)."""

from __future__ import annotations

import gc

from workers import runtime


def test_a_ready_worker_full_collection_walks_none_of_what_it_loaded(app, monkeypatch):
    from workers import celery_app

    monkeypatch.setattr(celery_app, "_flask_app", app)
    loaded = len(gc.get_objects())
    try:
        runtime.freeze_loaded()
        frozen, walked = gc.get_freeze_count(), len(gc.get_objects())
    finally:
        gc.unfreeze()  # the test process goes on collecting as before
    assert frozen >= loaded // 2
    assert walked < loaded // 100
