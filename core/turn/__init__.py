"""The turn: one user message answered, from the POST that queues it to the stored reply.

Both sides import it: the web process creates and cancels turns and serves their events; the
workers claim their steps, publish what the model and the tools say, and end them.

- ``lifecycle`` — every write of a turn's status: create, claim a step, take over, finish,
  cancel; it owns the cancel flag.
- ``states``    — the turn's words, once: its statuses, what a claim answers, a call's outcomes.
- ``calls``     — a tool call's whole life: stored within the limits, claimed, finished.
- ``queued``    — which of a turn's work waits in the queue, so the reaper sends only lost work.
- ``state``     — a turn's Redis keys: its event stream, cancel flag, task ids, cited URLs, cache.
- ``events``    — the event names and one publisher per event (the page reads the same list).
- ``parts``     — a stored message's parts: a constructor and readers for each type.
- ``sources``   — citing while a step or a call runs: each URL published once, whoever cites it.
- ``replies``   — what a reply shows and keeps, derived from each step's output and the tool
  calls; the one writer of ``Message.parts``, and what the turn cites.
"""
