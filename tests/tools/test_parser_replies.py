"""A parser process's replies are read as data: rebuilt as the job's return type, or refused."""

from __future__ import annotations

import json

import pytest

from tools.api import IngestError, IngestResult, PluginConfigError
from tools.parser_replies import BadReply, read_reply, write_error, write_ok
from tools.web_fetch.extract import Extracted


def extract_job() -> Extracted:
    raise NotImplementedError


def ingest_job() -> IngestResult:
    raise NotImplementedError


def reply(value: object) -> bytes:
    return json.dumps({"kind": "ok", "value": value, "leaving": False, "peak_kb": 1}).encode()


def test_a_result_comes_back_as_the_dataclass_its_job_declares():
    sent = write_ok(Extracted(title=None, text="Bonjour \ud83d"), False, 10)
    got = read_reply(sent, extract_job)
    assert got.value == Extracted(title=None, text="Bonjour \ud83d")
    assert read_reply(write_ok(IngestResult("x"), True, 5), ingest_job).leaving is True


@pytest.mark.parametrize(
    "value",
    [
        {"title": "t", "text": "x", "__class__": "os.system"},  # a field the type has not
        {"title": "t"},  # a field missing
        {"title": ["a"], "text": "x"},  # a field of another type
        "just text",  # not an object
    ],
)
def test_a_result_of_another_shape_than_its_job_declares_is_refused(value):
    with pytest.raises(BadReply):
        read_reply(reply(value), extract_job)


def test_an_error_comes_back_as_one_of_the_known_types_or_as_a_runtime_error():
    error = read_reply(write_error(IngestError("The PDF is encrypted."), False, 1)).value
    assert type(error) is IngestError and error.message == "The PDF is encrypted."
    config = PluginConfigError("Bad options.", {"key": ["Required."]})
    rebuilt = read_reply(write_error(config, False, 1)).value
    assert (rebuilt.message, rebuilt.fields) == ("Bad options.", {"key": ["Required."]})
    other = read_reply(write_error(ValueError("no"), False, 1)).value
    assert type(other) is RuntimeError and str(other) == "ValueError: no"


@pytest.mark.parametrize(
    "data",
    [
        b"\x80\x04\x95not json",  # a pickle
        b'{"kind": "ok", "value": 1}',  # no leaving flag nor peak
        b'{"kind": "run", "leaving": false, "peak_kb": 1}',  # an unknown kind
        b'{"kind": "error", "error": "x", "leaving": false, "peak_kb": 1}',
        b'{"kind": "ready", "missing": [1]}',
    ],
)
def test_anything_but_a_reply_is_refused(data):
    with pytest.raises(BadReply):
        read_reply(data)
