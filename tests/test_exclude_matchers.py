"""`exclude_commands` is matched without `re` for its usual entries: the string code that replaced
two regexes (`functions_rtk._starts_with_word`, `_plain`) gives the regexes' answers, proven on
every code point and on generated entries and commands."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from rtk_policy.policy import functions_rtk
from rtk_policy.policy.functions_rtk import _exclude_matcher, _plain, rtk_excluded

PLAIN_WORD = re.compile(r"[\w\-./=:@%+,^~]*")  # the regex `_plain` replaced


def test_plain_is_the_regex_on_every_code_point():
    """One character at a time, all of Unicode (surrogates included: `surrogateescape` input)."""
    differ = [
        code
        for code in range(sys.maxunicode + 1)
        if _plain(chr(code)) != bool(PLAIN_WORD.fullmatch(chr(code)))
    ]
    assert differ == []


@given(st.text(alphabet=st.sampled_from("aZ9_-./=:@%+,^~ \t'\"$é١\udc80"), max_size=12))
def test_plain_is_the_regex_on_words(word):
    assert _plain(word) == bool(PLAIN_WORD.fullmatch(word))


ENTRY = st.text(alphabet=st.sampled_from("ab .-*(\t\n"), min_size=0, max_size=5)
FORM = st.text(alphabet=st.sampled_from("ab .-*(\t\n\r"), min_size=0, max_size=8)


@settings(max_examples=400)
@given(ENTRY, FORM)
def test_a_word_prefix_entry_matches_as_its_regex_did(entry, form):
    """An entry without `^` was `re.escape(entry) + "(?:$|[ \\t\\n])"`, matched at the start."""
    trimmed = entry.strip()
    if not trimmed or trimmed.startswith("^"):
        return
    regex = re.compile(re.escape(trimmed) + r"(?:$|[ \t\n])")
    assert bool(_exclude_matcher(entry)(form)) == (regex.match(form) is not None)


def test_the_usual_entries_need_no_regex_module():
    """A word-prefix entry is decided by string code (a `^` entry is a regex, an invalid one a
    literal prefix)."""
    assert rtk_excluded("curl -s https://x", ["curl", "-s", "https://x"], ["curl"])
    assert not rtk_excluded("curlie x", ["curlie", "x"], ["curl"])
    assert rtk_excluded("/usr/bin/curl x", ["/usr/bin/curl", "x"], ["curl"])  # basename form
    assert rtk_excluded("npx playwright test", ["npx", "playwright", "test"], ["playwright"])
    assert rtk_excluded("git  push", ["git", "push"], ["^git +push"])
    assert _exclude_matcher("^a(b")("^a(b x")  # an invalid regex: its text as a literal prefix
    assert not _exclude_matcher("^a(b")("a(b x")
    assert functions_rtk._exclude_matcher("  ") is None
