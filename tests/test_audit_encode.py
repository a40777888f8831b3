"""`audit_encode`: a record's line and hash made from its decision's shared encodings are exactly
what `json.dumps` (structlog's `JSONRenderer`) and `audit_store.canonical_hash` give."""

from __future__ import annotations

import json

import structlog
from hypothesis import given, settings
from hypothesis import strategies as st
from test_audit_support import make_config, make_decision, make_outcome

from rtk_policy.audit import log as audit

from rtk_policy.audit import encode as audit_encode

from rtk_policy.audit import store as audit_store

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from('"\\\n\t\x00é€😀\u2028'),
    max_size=30,
)


def slow_line(event: dict, prev: str) -> str:
    """The line as the renderer and `canonical_hash` make it from a plain dict."""
    plain = dict(event)
    plain["prev"] = prev
    plain["hash"] = audit_store.canonical_hash(plain)
    return structlog.processors.JSONRenderer()(None, "", plain)


@settings(max_examples=60, deadline=None)
@given(
    command=TEXT,
    rewritten=st.none() | TEXT,
    reasons=st.lists(TEXT, max_size=3),
    head=st.lists(TEXT, min_size=4, max_size=4),
    total=st.integers(min_value=0, max_value=10**9),
    prev=TEXT,
    error=TEXT,
)
def test_shared_encoding_gives_the_renderers_bytes(
    tmp_path_factory, command, rewritten, reasons, head, total, prev, error
):
    config = make_config(tmp_path_factory.getbasetemp())
    decision = make_decision(command or "x", rewritten, reasons=tuple(reasons), verdict="deny")
    outcome = make_outcome([(command or "x", "git", 0), ("ls", "ls", 1)], decision)
    request = dict(zip(("session_id", "tool_use_id", "cwd", "command"), head, strict=True))
    for _ in range(2):  # the second record reuses the first one's shared encodings
        event = audit.build_event(config, head[0], request, outcome, None, total, error)
        assert isinstance(event, audit_encode.Event) and event.shared is not None
        expected = slow_line(event, prev)
        line = audit._finish(event, prev)
        assert line == expected + "\n"
        parsed = json.loads(line)
        assert parsed["hash"] == audit_store.canonical_hash(parsed) == event["hash"]


def test_a_changed_or_foreign_record_is_encoded_whole(tmp_path):
    config = make_config(tmp_path)
    decision = make_decision()
    outcome = make_outcome([("git status", "git", 0)], decision)
    event = audit.build_event(config, "claude", {"command": "git status"}, outcome, None, 5, "")
    assert event.shared.finish(dict(event, extra=1), "p", audit_store.sha256) is None
    changed = audit.build_event(config, "claude", {"command": "git status"}, outcome, None, 5, "")
    changed["verdict"] = "deny"  # same keys, another value: the shared text no longer applies
    assert changed.shared.finish(changed, "p", audit_store.sha256) is None
    assert json.loads(audit._finish(changed, "p"))["verdict"] == "deny"
    odd = audit.build_event(config, "claude", {"command": "git status"}, outcome, None, 5, "")
    odd["cwd"] = 7  # not a string: the renderer's own encoding
    assert json.loads(audit._finish(odd, "p"))["cwd"] == 7


def test_the_shared_fields_are_remembered_per_outcome(tmp_path):
    config = make_config(tmp_path)
    outcome = make_outcome([("git status", "git", 0)], make_decision())
    first = audit.build_event(config, "claude", {"command": "git status"}, outcome, None, 1, "")
    again = audit.build_event(config, "claude", {"command": "git status"}, outcome, None, 2, "")
    other = make_outcome([("git status", "git", 0)], make_decision())
    third = audit.build_event(config, "claude", {"command": "git status"}, other, None, 3, "")
    assert first.shared is again.shared and third.shared is not first.shared
    late = audit.build_event(config, "claude", {"command": "git status"}, outcome, None, 2, "late")
    assert late.shared is not first.shared and late["errors"] == ["late"]
