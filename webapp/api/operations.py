"""What each API view reads and answers, declared beside it for the OpenAPI description.

    @bp.post("")
    @api_login_required
    @operation(body=TokenBody, answers={201: NewTokenSchema}, errors=(400,))
    def create_token(): ...

The guards add their own errors (401 for everyone, 403 for admin-only views, see
``webapp.auth.guards``), and every operation with a body may answer 400 and 413 for a body that
is not JSON or too large (``webapp.api.bodies``), so a view names only the errors it raises
itself. ``answers`` maps a status to a Schema class, to ``NO_CONTENT`` (204), or to a
``(media type, Schema class or None)`` pair for answers that are not JSON (the Server-Sent
Events of a turn, each event described by the schema; a CSV file, text), or to a dict of such
media types to schemas for an answer that comes in more than one. ``error_schema`` replaces the
one error shape for views that answer errors in another (the OpenAI-compatible ``/v1/``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from marshmallow import Schema

NO_CONTENT = None
NO_BODY = "none"
JSON = "application/json"
MULTIPART = "multipart/form-data"
EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class Operation:
    """One view's body (a Schema class, or ``NO_BODY``), answers and errors of its own."""

    answers: dict[int, type[Schema] | tuple[str, type[Schema] | None] | dict | None]
    body: type[Schema] | str = NO_BODY
    body_type: str = JSON
    body_required: bool = True
    errors: tuple[int, ...] = ()
    parameters: tuple[dict, ...] = field(default=())
    error_schema: type[Schema] | None = None


def operation(**described) -> Callable[[Callable], Callable]:
    """Return a decorator that records the view's ``Operation`` on it as ``view.operation``."""
    recorded = Operation(**described)

    def record(view: Callable) -> Callable:
        view.operation = recorded
        return view

    return record


def find_operation(view: Callable) -> Operation | None:
    """Return the Operation declared for a view (through its guards), or None."""
    return getattr(view, "operation", None)
