"""The OpenAI-compatible API under ``/v1/``: any OpenAI client gets Lookout's web-grounded answers.

    GET  /v1/models             every installed model, as ``provider/model`` ids
    POST /v1/chat/completions   one Lookout turn on the workers, answered whole or streamed

Callers authenticate with a Lookout API token (``Authorization: Bearer``, the ``chat`` scope),
so the turn runs as that user: their enabled tools, quotas and usage. Errors take OpenAI's
shape, ``{"error": {"message", "type", "param", "code"}}`` (``errors.py``), whoever raises
them: these views, the token and body checks before them, or a route that does not exist.
How a request becomes a turn: ``conversations.py`` (its messages as a new conversation),
``following.py`` (reading the turn's events), ``answers.py`` (a completion and its chunks).
"""

from __future__ import annotations

from flask import Flask

from webapp.openai_api import completions, errors, model_list
from webapp.openai_api.routes import bp

PREFIX = "/v1/"

__all__ = ["bp", "completions", "init_openai_api", "model_list"]


def init_openai_api(app: Flask) -> None:
    """Register the ``/v1/`` routes, and answer every error under ``/v1/`` in OpenAI's shape."""
    app.register_blueprint(bp)
    app.extensions.setdefault("error_shapes", {})[PREFIX] = errors.openai_shape
    app.register_error_handler(errors.OpenAIError, errors.handle_openai_error)
