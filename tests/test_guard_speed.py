"""The guards' path checks stay cheap on long inputs of writes (issue 18: every decision in bounded
time): a pattern is compared only with the guarded places it may overlap (`paths.near`), a
pattern with no word of a guarded tail skips the tails, and one evaluation answers each path once.
The shortcuts must never drop a match: each is checked against the full comparison."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import guarded, paths
from rtk_policy.policy import load as policy_load

PROJECT = "/home/example/project"
_PARTS = ["a", "b", "tmp", "x", ".claude", "settings.json", "hooks", "*", "a*", "?", "[ab]", ""]
_part = st.sampled_from(_PARTS)
_plain = st.lists(st.sampled_from(["a", "b", "tmp", "x", ".claude", "hooks"]), max_size=4)


@given(st.lists(_part, min_size=1, max_size=5), st.booleans(), st.lists(_plain, max_size=8))
def test_near_holds_every_place_a_pattern_overlaps(parts, tree, places):
    pattern = "/" + "/".join(parts) + ("/" if tree else "")
    known = {"/" + "/".join(p) for p in places} | {"/"}
    if not paths.is_pattern(pattern):
        pattern += "*"
    near = paths.near(pattern, sorted(known), known)
    assert {p for p in known if paths.overlaps(pattern, p)} <= near


@given(st.lists(_part, min_size=1, max_size=6), st.booleans())
def test_a_pattern_without_a_tail_word_holds_no_tail(words, tree):
    if any(w != "*" and (w in guarded._NAMED or paths.is_pattern(w)) for w in words):
        return  # the shortcut does not apply
    for entry in guarded.ANYWHERE:
        assert not guarded._tail_in(words, entry.path.split("/"), tree), (words, entry.path)


def test_the_shortcuts_keep_the_guarded_answers():
    home = paths.home()
    for path in (f"{home}/.clau*/", "/*/", f"{home}/*/settings.json", "/tmp/x/*/", "/etc/pro*",
                 "/tmp/*/.claude/hooks", "/srv/a*/.rtk-policy/x", "/nothing/here/*"):  # fmt: skip
        assert guarded.guarded_what(path) == _slow_guarded_what(path), path


def _slow_guarded_what(path: str) -> str:
    """`guarded_what` with a pattern compared with every place and every tail (no shortcut)."""
    tables = guarded._table(guarded.guarded, guarded._evaluation()[0])
    for form in paths.spellings(path):
        if not paths.is_pattern(form):
            what, holds = guarded._absolute_what(form, tables)
            what, holds = (what, holds) if what else guarded._anywhere_what(form)
        else:
            places = (w for p, w in tables[0].items() if paths.overlaps(form, p))
            words, tree = form.strip("/").split("/"), form.endswith("/")
            tails = (e.what for e in guarded.ANYWHERE
                     if guarded._tail_in(words, e.path.split("/"), tree))  # fmt: skip
            what, holds = next(places, "") or next(tails, ""), False
        if what:
            return f"{path}, which holds {what}" if holds else f"{path}, {what}"
    return ""


def test_one_evaluation_answers_each_path_once(monkeypatch):
    engine = load_engine(policy_paths=[policy_load.packs_dir()])
    engine.budget_s = None
    calls: list[tuple[str, int, bool]] = []
    slow = guarded._place_what

    def counted(path, tables, tails):
        calls.append((path, id(tables), tails))
        return slow(path, tables, tails)

    monkeypatch.setattr(guarded, "_place_what", counted)
    body = "; ".join(["rm -rf $1"] * 50)
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    engine.evaluate(f"f(){{ {body}; }}; f /tmp/a; f /tmp/b", context)
    assert calls
    assert len(calls) == len(set(calls))  # 100 calls of rm, each path looked up once per list


def test_a_long_input_of_deletions_compares_few_places_per_segment(monkeypatch):
    engine = load_engine(policy_paths=[policy_load.packs_dir()])
    engine.budget_s = None
    count = [0]
    overlaps = paths.overlaps

    def counted(path: str, folder: str) -> bool:
        count[0] += 1
        return overlaps(path, folder)

    monkeypatch.setattr(paths, "overlaps", counted)
    segments = 200
    text = "cd /tmp; " + "; ".join(f"rm -rf x{i}" for i in range(segments))
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    outcome = engine.evaluate(text, context)
    assert outcome.evaluation.unjudged == 0
    assert count[0] <= 4 * segments, count[0]  # before: about 130 places per form, 4 forms each


def test_each_thread_keeps_the_answers_of_its_own_evaluation():
    """The server decides calls at the same time: one thread's answers never reach another's."""
    import threading

    seen: dict[str, object] = {}

    def evaluate(name: str) -> None:
        previous = paths.evaluation_memo({})
        try:
            seen[name] = guarded._evaluation()[1]
            assert guarded._evaluation()[1] is seen[name]  # the same evaluation: the same answers
        finally:
            paths.evaluation_memo(previous)

    threads = [threading.Thread(target=evaluate, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["a"] is not None and seen["b"] is not None and seen["a"] is not seen["b"]
    assert guarded._evaluation()[1] is None  # outside an evaluation nothing is kept
