"""JSON bodies: JSON that does not parse is a 400, a body over JSON_MAX_BYTES a 413, both in the
one error shape and before any view reads them; uploads keep their own limit."""

from __future__ import annotations

import io

import pytest

LIMIT = 4096


@pytest.fixture
def app(make_app):
    """An app reading JSON bodies of at most 4 KiB."""
    return make_app(JSON_MAX_BYTES=LIMIT)


@pytest.fixture
def headers(make_user, bearer):
    """A bearer token's headers, with a JSON content type."""
    return {**bearer(make_user("alice")), "Content-Type": "application/json"}


def error_of(response) -> dict:
    """Return the error of a response in the one JSON error shape."""
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "fields"}, body
    return body["error"]


@pytest.mark.parametrize(
    "data",
    [b"{", b'{"title": }', b"\xff\xfe", b'{"title": "a"} trailing', b"[" * 5000 + b"]" * 5000],
    ids=["open", "no-value", "not-utf8", "trailing", "nested-deeper-than-the-stack"],
)
def test_json_that_does_not_parse_is_a_400_that_says_so(client, headers, data):
    """The nesting case was a 500: json's RecursionError is not a ValueError Flask catches."""
    response = client.post("/api/conversations", data=data[:LIMIT], headers=headers)
    assert response.status_code == 400
    assert error_of(response)["message"].startswith("The request body is not valid JSON.")
    assert client.get("/api/conversations", headers=headers).get_json()["conversations"] == []


def test_a_json_body_over_the_limit_is_a_413_before_it_is_parsed(client, headers):
    too_big = b"{" + b" " * LIMIT  # not even valid JSON: its size alone decides
    response = client.post("/api/conversations", data=too_big, headers=headers)
    assert response.status_code == 413
    assert error_of(response)["message"] == (
        "The request body is larger than the 4,096 bytes the API reads. Send less at once: "
        "attach long text as a file with POST /api/uploads instead."
    )


def test_a_json_body_over_the_limit_is_refused_before_the_csrf_check(app, signed_in_client):
    client = signed_in_client("alice")
    client.environ_base.pop("HTTP_X_CSRFTOKEN")
    response = client.post("/api/conversations", data=b"{" + b" " * LIMIT)
    assert response.status_code == 413


def test_a_body_without_a_length_over_the_limit_is_a_413(client, headers):
    stream = io.BytesIO(b'{"title": "' + b"a" * LIMIT + b'"}')
    environ = {"wsgi.input_terminated": True}
    response = client.post(
        "/api/conversations", input_stream=stream, headers=headers, environ_overrides=environ
    )
    assert response.status_code == 413
    assert "larger than the 4,096 bytes" in error_of(response)["message"]


def test_a_json_body_at_the_limit_is_read(client, headers):
    title = "a" * 150
    body = f'{{"title": "{title}"}}'.ljust(LIMIT).encode()
    response = client.post("/api/conversations", data=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["title"] == title


def test_an_upload_keeps_its_own_larger_limit(client, make_user, bearer):
    text = b"lighthouse\n" * (LIMIT // 5)
    response = client.post(
        "/api/uploads",
        data={"file": (io.BytesIO(text), "notes.txt", "text/plain")},
        headers=bearer(make_user("bob")),
    )
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["size"] == len(text)


def test_a_conversation_is_created_without_a_body(client, headers):
    response = client.post(
        "/api/conversations", headers={"Authorization": headers["Authorization"]}
    )
    assert response.status_code == 201
    assert response.get_json()["title"] == ""


def test_bodies_loaded_at_once_by_one_schema_each_get_their_own_answer(app):
    """A schema is made once per process and loads every request's body (webapp/api/bodies.py):
    what one load found wrong never reaches another's answer, in any thread."""
    from concurrent.futures import ThreadPoolExecutor

    from webapp.api.bodies import load_object
    from webapp.api.schemas.turns import TurnRequest
    from webapp.errors import ApiError

    def load(number: int):
        body = {"model": f"p/model-{number}", "content": "Hi"} if number % 2 else {"model": "x"}
        try:
            return load_object(TurnRequest, body, "turn")["model"]
        except ApiError as refused:
            return refused.fields

    with app.app_context(), ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(load, range(400)))
    refused = {"model": ["Model must be 3 to 300 characters long."]}
    assert answers == [f"p/model-{n}" if n % 2 else refused for n in range(400)]
