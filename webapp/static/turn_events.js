/* The names of a turn's events, written by `python -m core.turn.events` from
 * core/turn/events.py; a test keeps the two equal. Do not edit by hand.
 */
window.LookoutTurnEvents = {
  "TURN_STARTED": "turn.started",
  "TEXT_DELTA": "text.delta",
  "REASONING_DELTA": "reasoning.delta",
  "TOOL_STARTED": "tool.started",
  "TOOL_FINISHED": "tool.finished",
  "SOURCE_ADDED": "source.added",
  "TURN_COMPLETED": "turn.completed",
  "TURN_FAILED": "turn.failed",
  "TURN_CANCELLED": "turn.cancelled",
  "STREAM_CLOSED": "stream.closed",
  "PROGRESS": [
    "turn.started",
    "reasoning.delta",
    "text.delta",
    "tool.started",
    "tool.finished",
    "source.added"
  ],
  "ENDINGS": {
    "turn.completed": "completed",
    "turn.failed": "failed",
    "turn.cancelled": "cancelled"
  }
};
