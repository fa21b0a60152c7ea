"""Every process rebuilds its plugin host after options are saved in any process, even when
Redis restarted empty between two saves (a counted version could repeat the one it held)."""

from __future__ import annotations

from core.extensions import get_redis
from core.plugin_host import get_host, save_options


def test_a_save_after_redis_restarted_empty_still_rebuilds_other_processes_hosts(make_app):
    admin = make_app()
    worker = make_app(DATABASE_URL=admin.config["DATABASE_URL"])
    with admin.app_context():
        save_options("web_search", {"engine": "first"})
    with worker.app_context():
        first = get_host()
        assert get_host() is first  # kept while nothing changed
        get_redis().flushdb()  # as a Redis that keeps nothing on disk, restarted
    with admin.app_context():
        save_options("web_search", {"engine": "second"})
    with worker.app_context():
        assert get_host() is not first
