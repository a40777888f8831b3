"""`util.json_codec`: what `json.loads` and `json.dumps` give, without importing `json` (or `re`).

The codec's fast path calls CPython's C scanner and encoder directly; everything else falls back to
`json`. These tests compare both on documents and options the hook meets, and run the error cases
in a fresh interpreter where `json` is not imported (the C scanner then cannot raise its own
error: the codec must still give `json`'s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rtk_policy.util import json_codec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DOCUMENTS = [
    '{"a": [1, 2.5, null, true, false, "x\\u00e9"], "b": {}}',
    "  [1, -0.0, 1e400, -1e-400, 123456789012345678901234567890]\n\t\r",
    '"\\ud800 lone surrogate"',
    '"é \u2028 \U0001f600"',
    "NaN",
    "[Infinity, -Infinity]",
    '{"k": "v", "k": "w"}',
    '{"deep": ' * 50 + "0" + "}" * 50,
]
BAD = [
    "",
    "   ",
    '{"tool_name": "Bash", ',
    "[1,]",
    '{"a" 1}',
    "[1] x",
    "\ufeff{}",
    '"\\x"',
    "[" * 100_000,
    "nul\x00",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_documents_read_as_json_reads_them(text):
    """A document, as text and as UTF-8 bytes, reads as `json.loads` reads it."""
    expected = json.loads(text)
    assert repr(json_codec.loads(text)) == repr(expected)
    assert repr(json_codec.loads(text.encode("utf-8", "surrogatepass"))) == repr(expected)


def test_bytes_in_other_encodings_are_read_as_json_reads_them():
    """A BOM, UTF-16 and UTF-32 go to `json`; bytes that are not UTF-8 fail as there."""
    for data in (b'\xef\xbb\xbf{"a": 1}', '{"a": 1}'.encode("utf-16"), '[1]'.encode("utf-32-le")):
        assert json_codec.loads(data) == json.loads(data)
    with pytest.raises(UnicodeDecodeError):
        json_codec.loads(b'"\xff"')


def test_errors_are_jsons_own_in_an_interpreter_without_json():
    """Each bad document raises what `json.loads` raises (type and message), and `json` was not
    imported before the first error."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {ROOT!r})\n"
        "from rtk_policy.util import json_codec\n"
        "assert 'json' not in sys.modules and 're' not in sys.modules\n"
        "out = []\n"
        f"for text in {BAD!r}:\n"
        "    try:\n"
        "        json_codec.loads(text)\n"
        "        out.append(None)\n"
        "    except Exception as error:\n"
        "        out.append([type(error).__name__, str(error)])\n"
        "import json\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = []
    for text in BAD:
        try:
            json.loads(text)
            expected.append(None)
        except Exception as error:  # noqa: BLE001 - whatever json raises, the codec must too
            expected.append([type(error).__name__, str(error)])
    assert json.loads(done.stdout) == expected
    assert None not in expected


VALUES = [
    {"b": [1, 2.5, None, True, "é\u2028\ud800", {"x": "y"}], "a": 1, "c": -0.0},
    ["plain", 10**30, float("nan"), float("inf")],
    "a string alone",
    {1: "int key", 2.5: "float key", None: "null key", False: "bool key"},
]


@pytest.mark.parametrize("value", VALUES)
def test_values_are_written_as_json_writes_them(value):
    """`dumps` and `encoder` write what `json.dumps` writes, for each option used."""
    mixed_keys = isinstance(value, dict) and None in value  # keys that sorting cannot compare
    for options in ({}, {"ensure_ascii": False}, {} if mixed_keys else {"sort_keys": True}):
        compact = json_codec.dumps(value, compact=True, **options)
        assert compact == json.dumps(value, separators=(",", ":"), **options)
        assert json_codec.dumps(value, **options) == json.dumps(value, **options)
        assert json_codec.encoder(**options)(value) == json.dumps(value, **options)


def test_what_json_cannot_write_fails_as_json_fails():
    """Cycles, unknown types and keys, and NaN with `allow_nan=False` fail as in `json`."""
    circular: list[object] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_codec.dumps(circular)
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        json_codec.dumps({"a": object()})
    with pytest.raises(TypeError, match="keys must be str"):
        json_codec.dumps({1j: 1})
    with pytest.raises(ValueError, match="Out of range float"):
        json_codec.dumps([float("inf")], allow_nan=False)
    assert json_codec.dumps({"a": object()}, default=lambda _: "x") == '{"a": "x"}'


def test_strings_are_quoted_as_json_quotes_them():
    """The two string quoters are `json.encoder`'s."""
    from json import encoder

    for text in ("", "plain", 'q"b\\', "é\u2028\x85\ud800\U0001f600", "\x00\x1f"):
        assert json_codec.quote_ascii(text) == encoder.encode_basestring_ascii(text)
        assert json_codec.quote_unicode(text) == encoder.encode_basestring(text)
