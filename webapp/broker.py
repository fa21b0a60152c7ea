"""What the web side and the workers agree on about Celery: the names of the tasks.

The web side sends tasks by these names through webapp/queue.py without importing `workers`;
the workers register their tasks under the same names (tests/workers/test_health.py checks
that every name here is registered).
"""

from __future__ import annotations

PING = "lookout.ping"
RUN_TURN_STEP = "lookout.run_turn_step"
RUN_TOOL_CALL = "lookout.run_tool_call"
PROBE_PROVIDER = "lookout.probe_provider"

TASK_NAMES = (PING, RUN_TURN_STEP, RUN_TOOL_CALL, PROBE_PROVIDER)
