"""String-literal escapes of the interpreter readers (shell/string_escapes), checked against the
interpreters of this machine where they are installed: each prints the literal, and the decoder
must give the same text."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from rtk_policy.shell.string_escapes import c_style, decode, quote_only

BODIES = [
    "rm\\x20-rf\\x20/",
    "rm\\040-rf\\040/",
    "a\\tb\\nc",
    "back\\\\slash \\\"q\\\"",
    "\\x41\\x4a\\101",
    "\\u0041",
    "plain",
]

#: how each interpreter prints a double-quoted literal with `body`: (program, argv builder, lang)
PRINTERS = {
    "awk": (lambda b: ["awk", f'BEGIN {{ printf "%s", "{b}" }}'], "awk"),
    "perl": (lambda b: ["perl", "-e", f'print "{b}"'], "pl"),
    "node": (lambda b: ["node", "-e", f'process.stdout.write("{b}")'], "js"),
    "python": (lambda b: [sys.executable, "-c", f'import sys; sys.stdout.write("{b}")'], "py"),
}


@pytest.mark.parametrize("name", sorted(PRINTERS))
@pytest.mark.parametrize("body", BODIES)
def test_decode_matches_the_interpreter(name, body):
    """The decoded double-quoted literal is what the interpreter itself prints."""
    argv, lang = PRINTERS[name]
    argv = argv(body)
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    if lang in ("awk", "pl") and body == "\\u0041":
        pytest.skip("awk and perl have no \\u escape")
    real = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    assert real.returncode == 0, real.stderr
    assert decode(body, lang, '"') == real.stdout


def test_perl_single_quotes_decode_only_backslash_and_quote():
    """A single-quoted perl string keeps `\\x20` as typed."""
    body = "rm\\x20-rf \\\\ \\'"
    assert quote_only(body) == "rm\\x20-rf \\ '"
    assert decode(body, "pl", "'") == quote_only(body)
    if shutil.which("perl"):
        real = subprocess.run(["perl", "-e", f"print '{body}'"], capture_output=True, text=True)
        assert real.stdout == quote_only(body)


def test_python_keeps_the_backslash_of_an_unknown_escape_and_raw_strings():
    """Python: `"\\q"` is backslash-q, and an r-string decodes nothing."""
    assert decode("a\\qb", "py", '"') == "a\\qb"
    assert decode("a\\qb", "js", '"') == "aqb"
    assert decode("rm\\x20/", "py", '"', raw=True) == "rm\\x20/"


def test_braced_code_points():
    """`\\x{41}` (perl) and `\\u{42}` (node, ruby)."""
    assert c_style("\\x{41}\\u{42}") == "AB"
