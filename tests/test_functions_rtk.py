"""Unit tests of the RTK registry helpers in rtk_policy.policy.functions_rtk and functions_rtk_read
(no CEL involved)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtk_policy.policy import functions_rtk as f
from rtk_policy.policy import functions_rtk_read as r


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git -C /tmp status", "git status"),
        ("git --no-pager -c a=b log -3", "git log -3"),
        ("/usr/bin/grep -r x", "grep -r x"),
        ("golangci-lint --color never run ./...", "golangci-lint run ./..."),
        ("golangci-lint -v run", "golangci-lint run"),
        ("git \\\n    diff HEAD~1", "git diff HEAD~1"),
        ("make\r", "make\r"),
    ],
)
def test_norm(text: str, expected: str) -> None:
    assert f.rtk_norm(text) == expected


@pytest.mark.parametrize(
    ("text", "prefixes", "cmd", "expected"),
    [
        ("npx vitest run --coverage", f.rtk_runner_prefixes(["vitest run", "vitest"]), "rtk vitest",
         "rtk vitest --coverage"),
        ("jest running", ["jest run", "jest"], "rtk jest", "rtk jest running"),
        ("pnpm\tinstall", ["pnpm"], "rtk pnpm", "rtk pnpm install"),
        ("yadm status", ["git", "yadm"], "rtk git", "rtk git status"),
        ("/usr/bin/liquibase update", ["liquibase"], "rtk liquibase", "/usr/bin/liquibase update"),
        ("jest run", ["jest run", "jest"], "rtk jest", "rtk jest"),
    ],
)  # fmt: skip
def test_replace_prefix(text: str, prefixes: list[str], cmd: str, expected: str) -> None:
    assert f.rtk_replace_prefix(text, prefixes, cmd) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("php vendor/bin/phpunit tests/", "phpunit tests/"),
        ("./vendor/bin/pint", "pint"),
        ("./bin/phpunit x", "bin/phpunit x"),
        ("php vendor/bin/pint", "php vendor/bin/pint"),
    ],
)
def test_php_tool(text: str, expected: str) -> None:
    assert f.rtk_php_tool(text) == expected


@pytest.mark.parametrize(
    ("text", "argv", "entries", "expected"),
    [
        ("curl https://x", ["curl", "https://x"], ["curl"], True),
        ("curlx a", ["curlx", "a"], ["curl"], False),
        ("git push origin", ["git", "push", "origin"], ["git push"], True),
        ("git status", ["git", "status"], ["git push"], False),
        ("'pytest'", ["pytest"], ["pytest"], True),
        ("'pytest x'", ["pytest x"], ["pytest"], False),
        ("python -m pytest", ["python", "-m", "pytest"], ["pytest"], True),
        ("npx eslint .", ["npx", "eslint", "."], ["eslint"], True),
        ("/usr/bin/jj log", ["/usr/bin/jj", "log"], ["jj"], True),
        ('git log --format="%H"', ["git", "log", "--format=%H"], ["^git log --format=%H"], True),
        ('git log --format="%H"', ["git", "log", "--format=%H"], ["^git log --format=%h"], False),
        ('grep -r "a b" .', ["grep", "-r", "a b", "."], ["^grep -r a\\\\ b"], True),
        ("git status", ["git", "status"], ["", "^"], False),
        ("git (x", ["git", "(x"], ["^git ("], False),
    ],
)  # fmt: skip
def test_excluded(text: str, argv: list[str], entries: list[str], expected: bool) -> None:
    assert f.rtk_excluded(text, argv, entries) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("head -20 src/main.rs", "rtk read src/main.rs --head-lines 20"),
        ("head --lines=5 a", "rtk read a --head-lines 5"),
        ("head\tfile.txt", "rtk read file.txt --head-lines 10"),
        ("tail -n 12 a", "rtk read a --tail-lines 12"),
        ("tail a", ""),
        ("tail -f log", ""),
        ("head a b", ""),
        ("head -c 10 f.bin", ""),
        ("head src/*.rs", ""),
        ("head -n 1 '--'", ""),
        ("cat src/main.rs", "rtk read src/main.rs"),
        ("cat f -n", "rtk read f -n"),
        ("cat -nA f", ""),
        ("cat '-A' f", ""),
        ("cat -n", ""),
        ("cat\t>out f", ""),
    ],
)
def test_read(text: str, expected: str) -> None:
    assert r.rtk_read(text) == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["tail", "-n", "20"], False),
        (["tail", "-f"], True),
        (["tail", "-qF"], True),
        (["tail", "-fn20"], True),
        (["tail", "--fo"], True),
        (["tail", "--follow=name"], True),
        (["tail", "--lines=5"], False),
    ],
)
def test_tail_follows(argv: list[str], expected: bool) -> None:
    assert r.rtk_tail_follows(argv) is expected


def test_search_modes() -> None:
    assert r.rtk_search_pattern_file(["grep", "-f", "pats.txt"])
    assert r.rtk_search_pattern_file(["rg", "--file=p"])
    assert not r.rtk_search_pattern_file(["grep", "-e", "-f", "x"])
    assert r.rtk_search_lists_files(["grep", "-l", "x"])
    assert not r.rtk_search_lists_files(["grep", "-lc", "x"])
    assert not r.rtk_search_lists_files(["grep", "-e", "-l", "x"])
    assert r.rtk_search_lists_files(["rg", "--files"])


def test_uv_run_routing() -> None:
    assert f.rtk_uv_run_options("uv run -- ", "cargo test", [], []) == "rtk uv run -- cargo test"
    assert f.rtk_uv_run_options("uv run ", "pytest", [], []) == ""
    assert (
        f.rtk_uv_run_fallback("uv run --frozen timeout 5 uv run ", "foo", ["uv run --frozen"], [])
        == "uv run --frozen timeout 5 rtk uv run foo"
    )
    assert f.rtk_uv_run_fallback("uv run env uv run ", "xyz", [], ["uv run xyz"]) == ""
    assert f.rtk_uv_run_fallback("timeout 5 ", "foo", [], []) == ""


def test_continuations_respect_quotes() -> None:
    assert f.collapse_continuations("a \\\n  b") == "a b"
    assert f.collapse_continuations("'a \\\n b'") == "'a \\\n b'"


_UNQUOTED = st.text(alphabet=" \t\n\r\v\fab/=-$|&;\u00a0", max_size=30)


@settings(max_examples=400, deadline=None)
@given(_UNQUOTED)
def test_unquoted_text_is_split_as_the_quote_aware_loop_splits_it(text):
    """The fast split of a text with no quote or backslash equals the general loop's (forced here
    by a quoted word appended after a blank)."""
    general = f.split_words(text + " ''")
    assert general[-1] == ("''", len(text) + 1)
    assert f.split_words(text) == general[:-1]
    stripped = text.strip(f.IFS)
    words = f.split_words(stripped)
    assert f._first_word(stripped) == (words[0][0] if words else "")
