"""`tools/decision_dump.py`, the behaviour check for refactors: its inputs, variants and records."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("decision_dump", ROOT / "tools" / "decision_dump.py")
dump = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(dump)


def _tree(tmp_path: Path) -> Path:
    """A tree of inputs: two corpus lines and a test file with two string constants."""
    tests = tmp_path / "tree" / "tests"
    (tests / "corpus").mkdir(parents=True)
    (tests / "corpus" / "commands.txt").write_text("git status\nrm -rf /\n", encoding="utf-8")
    (tests / "test_x.py").write_text('A = "ls -la"\nB = "git status"\n', encoding="utf-8")
    return tmp_path / "tree"


def test_the_inputs_are_the_corpus_then_the_test_strings_each_once(tmp_path):
    """Corpus lines first, then the test files' constants; a repeated text counts once."""
    assert dump.base_inputs(str(_tree(tmp_path))) == ["git status", "rm -rf /", "ls -la"]


def test_the_real_inputs_hold_the_corpus_and_every_test_string():
    """On this checkout: every corpus line and every short string constant of the tests."""
    inputs = set(dump.base_inputs(str(ROOT)))
    corpus = (ROOT / "tests" / "corpus" / "commands.txt").read_text(encoding="utf-8")
    assert set(corpus.splitlines()) <= inputs
    module = ast.parse((ROOT / "tests" / "test_security_baseline.py").read_text(encoding="utf-8"))
    strings = {
        node.value
        for node in ast.walk(module)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 4000
    }
    assert strings and strings <= inputs


def test_each_input_has_twelve_distinct_variants_starting_with_itself():
    """The text itself, then 11 settings; a single quote survives `bash -c '…'` quoting."""
    found = list(dump.variants("echo 'a b' c"))
    assert len(found) == 12 and len(set(found)) == 12
    assert found[0] == "echo 'a b' c"
    assert "bash -c 'echo '\\''a b'\\'' c'" in found


def test_a_denied_command_stays_denied_in_every_variant():
    """The records of `rm -rf /` in its 12 variants: three lines each, every verdict a deny."""
    inputs = list(dump.variants("rm -rf /"))
    lines = "".join(dump.decision_records(inputs)).splitlines()
    assert len(lines) == 3 * len(inputs)
    verdicts = [ast.literal_eval(lines[at + 1])[0] for at in range(0, len(lines), 3)]
    assert verdicts == ["deny"] * len(inputs)
    assert [ast.literal_eval(lines[at]) for at in range(0, len(lines), 3)] == inputs


def test_two_runs_write_the_same_bytes(tmp_path):
    """Decisions and parses are deterministic: the property a comparison of two commits needs."""
    tree = str(_tree(tmp_path))
    for extra in ([], ["--shell"]):
        first, second = tmp_path / "one.txt", tmp_path / "two.txt"
        assert dump.main([str(first), "--inputs", tree, *extra]) == 0
        assert dump.main([str(second), "--inputs", tree, *extra]) == 0
        assert first.read_bytes() == second.read_bytes()
        records = first.read_text(encoding="utf-8").count("\n")
        per_input = 2 * len(dump.PREFIX_SETTINGS) if extra else 3
        assert records == 3 * 12 * per_input
