"""A worker outlives a Redis restart with tasks in flight (a fix for kombu 5.7's Redis transport).

When the broker connection drops, Celery detaches the transport from the lost connection and
reconnects on a new one; the old channel is still used afterwards, to put back the tasks it had
delivered and to acknowledge the tasks that were running. Both ask the detached transport for
its connection details, fail with an AttributeError that neither Celery nor kombu expects, and
the worker exits ("Unrecoverable error"), with every turn it ran. Found by
tests/faults/test_redis_restart.py.

``install`` makes the old channel fail as what it is, a lost connection, which Celery and kombu
log and ignore. No task is lost: an unacknowledged task stays in Redis's unacknowledged set and
is delivered again after ``visibility_timeout``; a task Redis itself lost is a turn the reaper
fails.
"""

from __future__ import annotations

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

_installed = False


def install() -> None:
    """Patch the Redis transport's channels to fail like a lost connection once detached."""
    global _installed
    if _installed:
        return
    connparams = kombu_redis.Channel._connparams

    def connparams_unless_detached(self, *args, **kwargs):
        if self.connection.client is None:
            raise RedisConnectionError("The broker connection of this channel is gone.")
        return connparams(self, *args, **kwargs)

    kombu_redis.Channel._connparams = connparams_unless_detached
    _installed = True
