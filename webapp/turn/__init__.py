"""The turn: one user message answered, from the POST that queues it to the stored reply.

Both sides import it: the web process creates and cancels turns and serves their events; the
workers claim their steps, publish what the model and the tools say, and end them.

- ``lifecycle`` — every write of a turn's status: create, claim a step, take over, finish,
  cancel; it owns the cancel flag.
- ``calls``     — a tool call's claim: run once, and again only by the task that claimed it.
- ``queued``    — which of a turn's work waits in the queue, so the reaper sends only lost work.
- ``state``     — a turn's Redis keys: its event stream, cancel flag, task ids, cited URLs, cache.
- ``events``    — the event names and one publisher per event (the page reads the same list).
- ``parts``     — a stored message's parts: a constructor and readers for each type.
- ``sources``   — the sources of one reply: each URL cited once, whoever cites it.
- ``replies``   — what a reply keeps when its turn ends between a step's stream and its store.
"""
