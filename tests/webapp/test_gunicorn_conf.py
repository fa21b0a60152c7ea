"""gunicorn's settings module: a web worker with its app loaded leaves what it loaded out of the
cycle collector's walks (issue 29), as a Celery worker does once ready."""

from __future__ import annotations

import gc

from webapp import gunicorn_conf


def test_a_web_worker_with_its_app_loaded_freezes_what_it_loaded(app):
    assert app.url_map is not None  # the app, loaded as gunicorn's worker loads it
    loaded = len(gc.get_objects())
    try:
        gunicorn_conf.post_worker_init(worker=None)
        frozen, walked = gc.get_freeze_count(), len(gc.get_objects())
    finally:
        gc.unfreeze()  # the test process goes on collecting as before
    assert frozen >= loaded // 2
    assert walked < loaded // 100
