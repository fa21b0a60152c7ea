"""Decoding pages: the Content-Type charset, else (HTML) a BOM or <meta>, else UTF-8."""

from __future__ import annotations

import codecs
import json

import pytest

from tools.charset import charset_from_content_type, decode_json, decode_page, loads_json


def test_the_content_type_charset_wins():
    assert decode_page("café".encode("cp1252"), "text/plain", "windows-1252") == "café"


@pytest.mark.parametrize(
    ("content_type", "charset"),
    [
        ("text/html; charset=ISO-8859-1", "ISO-8859-1"),
        ('text/html; charset="utf-8"', "utf-8"),
        ("text/html", None),
        ("text/html; charset=", None),
    ],
)
def test_the_charset_parameter_is_read_from_content_type(content_type, charset):
    assert charset_from_content_type(content_type) == charset


def test_an_html_byte_order_mark_is_used_without_a_declared_charset():
    data = codecs.BOM_UTF16_LE + "<p>naïve</p>".encode("utf-16-le")
    assert decode_page(data, "text/html", None) == "<p>naïve</p>"


@pytest.mark.parametrize(
    "meta",
    [
        b'<meta charset="windows-1252">',
        b"<meta charset=iso-8859-1>",
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
    ],
)
def test_an_html_meta_charset_is_used_without_a_declared_charset(meta):
    data = b"<html><head>" + meta + b"</head><body>" + "café".encode("cp1252") + b"</body>"
    assert "café" in decode_page(data, "text/html", None)


def test_a_meta_charset_is_ignored_outside_html():
    data = b'<meta charset="windows-1252">' + "café".encode()
    assert decode_page(data, "text/plain", None).endswith("café")


def test_utf8_is_the_default_and_bad_bytes_are_replaced():
    assert decode_page(b"ok \xff end", "text/plain", None) == "ok \ufffd end"


def test_an_unknown_charset_falls_back_to_utf8():
    assert decode_page("é".encode(), "text/plain", "no-such-charset") == "é"


def test_a_utf8_bom_is_not_part_of_the_text():
    assert decode_page(codecs.BOM_UTF8 + b"hello", "text/plain", "utf-8") == "hello"


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [
        ("utf-16-le", b""),
        ("utf-16-be", b""),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-32-le", b""),
        ("utf-8", codecs.BOM_UTF8),
    ],
)
@pytest.mark.parametrize("declared", [None, "iso-8859-1"])
def test_json_in_utf16_or_utf32_is_read_by_its_first_bytes(encoding, bom, declared):
    body = '{"title": "Café — naïve"}'
    assert decode_json(bom + body.encode(encoding), declared) == body


def test_json_labelled_latin1_is_read_as_utf8_when_it_is_utf8_and_as_latin1_otherwise():
    assert decode_json('["café"]'.encode(), "iso-8859-1") == '["café"]'
    assert decode_json('["café"]'.encode("cp1252"), "iso-8859-1") == '["café"]'


def test_json_labelled_utf16_is_read_as_it_says():
    assert decode_json('["é"]'.encode("utf-16"), "utf-16") == '["é"]'


def test_json_read_with_half_a_surrogate_pair_gets_a_replacement_character_everywhere():
    text = r'{"a\ud800": ["x\udc00y", {"deep": [["\ud83d\ude00 \ud83d"]]}], "n": 1.5}'
    assert loads_json(text) == {
        "a\ufffd": ["x\ufffdy", {"deep": [["\U0001f600 \ufffd"]]}],
        "n": 1.5,
    }
    assert loads_json(text.encode("utf-16")) == loads_json(text)
    assert loads_json(r'"\udfff"') == "\ufffd"


def test_json_without_a_lone_surrogate_reads_as_json_loads_does():
    text = r'{"emoji": "\ud83d\ude00", "slash": "\\ud800 is written, not meant", "list": [1, null]}'
    assert loads_json(text) == json.loads(text)
    with pytest.raises(ValueError):
        loads_json('{"a": ')
