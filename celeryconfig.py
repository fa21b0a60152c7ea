"""Celery settings for the workers, taken from the environment through core.config."""

from core.broker import client_settings
from core.config import load_settings

# Celery reads this module's names: the broker, results, queue and serializers the web side
# uses too, then the workers' own settings below. load_settings, not load_config: importing
# this module must write nothing (the app creates instance/secret_key when it starts).
globals().update(client_settings(load_settings()))

result_expires = 3600
timezone = "UTC"
enable_utc = True

# A task is acknowledged after it ran, so a worker that dies mid-task leaves it to be redelivered.
task_acks_late = True
task_reject_on_worker_lost = True
worker_prefetch_multiplier = 1

# The threads pool applies no Celery time limits; tasks enforce their own deadlines. This is the
# longest any task may run, and Redis redelivers an unacknowledged task only after
# visibility_timeout, which must stay well above it or running tasks would be handed out twice.
TASK_HARD_LIMIT_SECONDS = 15 * 60
# The backstop where the pool enforces it (prefork, gevent); the threads pool ignores it, and
# tool calls enforce their own deadlines (Tool.timeout_seconds) in any pool.
task_time_limit = TASK_HARD_LIMIT_SECONDS
broker_transport_options = {"visibility_timeout": 2 * TASK_HARD_LIMIT_SECONDS + 60}
result_backend_transport_options = {"visibility_timeout": 2 * TASK_HARD_LIMIT_SECONDS + 60}

broker_connection_retry_on_startup = True
worker_hijack_root_logger = False
worker_send_task_events = False
# Celery's stand-in for stderr logs every write as a record of its own: a traceback's ^ markers,
# written one at a time, came out one character a line. Stray output keeps the process's own
# stderr (./run's terminal, a service's journal), whole lines as written.
worker_redirect_stdouts = False
