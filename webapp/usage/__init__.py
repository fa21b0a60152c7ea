"""Usage as people read it: summaries of the usage counts (``core/models/usage.py``) for a
period, per user and per day (``report``), and the admins' chart of the last 30 days
(``chart``); and the bounded tool names that metrics, usage rows and logs take
(``tool_names``)."""
