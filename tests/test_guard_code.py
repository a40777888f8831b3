"""Compiled guards (`policy/guard_code.py`): a generated function gives its closure's value.

A compiled guard gives exactly the value of the closure guard (`guard.py`) of the same form, so a
rule is skipped or proven exactly where the closure would skip or prove it. Checked on random typed
forms and environments, on a grid of every node kind, on the shipped packs' forms and residuals, and
end to end: evaluations with compiled guards equal evaluations with closures only.
"""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtk_policy.policy import load_policy_set

from rtk_policy.policy.guards import code as guard_code
from rtk_policy.policy.guards import plans as plans_module
from rtk_policy.policy import policyset as policyset_module
from rtk_policy.policy.facts import command_value, segment_value
from rtk_policy.policy.guards.guard import UNKNOWN, build_guard, guard_functions
from rtk_policy.policy.guards.code import CompiledGuards, _Writer, form_function
from rtk_policy.policy.model import Context
from rtk_policy.shell import parse

ROOT = Path(__file__).resolve().parent.parent


def _boom(value: str) -> str:
    raise ValueError(value)


FUNCTIONS = {
    ("twice", 1): (lambda s: s + s, ((str,),)),
    ("boom", 1): (_boom, ((str,),)),
    ("join", 2): (lambda a, b: a + "/" + b, ((str,), (str, int))),
    ("count", 1): (len, ((list, dict),)),
}

_texts = st.sampled_from(["", "git", "-f", "rm", "git push", "a/b", "x", "--force", "push"])
_scalars = st.one_of(_texts, st.integers(-2, 3), st.booleans())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_texts, inner, max_size=3)
    ),
    max_leaves=6,
)
_PATTERNS = ["^g", "it", "(", "push$", "a|b", "[0-9]+", "^-[a-z]*f", "x(?:y)?z", "^git push"]


def _field(name: str) -> tuple:
    return ("dot", ("ident", "segment"), name)


def _lit(values: st.SearchStrategy) -> st.SearchStrategy:
    return values.map(lambda value: ("lit", value))


# Typed forms, so that most of them give real values (random shapes mostly give UNKNOWN), with
# ill-typed and unknown nodes mixed in for the UNKNOWN paths.
_odd = st.one_of(
    st.just(("unknown",)),
    _lit(_scalars),
    st.sampled_from([_field("missing"), ("ident", "x"), ("ident", "missing"), _field("pipeline")]),
)
_strings = st.deferred(
    lambda: st.one_of(
        _lit(_texts),
        st.sampled_from([_field("program"), _field("command")]),
        st.tuples(st.just("add"), _strings, _strings),
        st.tuples(st.just("index"), _lists, _ints),
        st.tuples(st.just("index"), st.just(_field("env")), _strings),
        st.tuples(
            st.just("call"), st.sampled_from(["string", "twice", "boom"]), st.tuples(_strings)
        ),
        st.tuples(st.just("call"), st.just("string"), st.tuples(_ints)),
        st.tuples(
            st.just("call"), st.just("join"), st.tuples(_strings, st.one_of(_strings, _ints))
        ),
        _odd,
    )
)
_ints = st.deferred(
    lambda: st.one_of(
        _lit(st.integers(-1, 3)),
        st.just(_field("count")),
        st.just(("dot", _field("pipeline"), "size")),
        st.tuples(st.just("call"), st.sampled_from(["size", "count"]), st.tuples(_lists)),
        st.tuples(st.just("mcall"), st.just("size"), _strings, st.just(())),
        _odd,
    )
)
_lists = st.deferred(
    lambda: st.one_of(
        st.sampled_from([_field("args"), _field("flags"), _field("env")]),
        st.tuples(st.just("list"), st.lists(_strings, max_size=3).map(tuple)),
        _odd,
    )
)


def _comprehension(body_name: str) -> st.SearchStrategy:
    item = ("ident", body_name)
    body = st.one_of(
        st.tuples(st.just("rel"), st.sampled_from(["eq", "ne"]), st.just(item), _lit(_texts)),
        st.tuples(
            st.just("mcall"),
            st.sampled_from(["startsWith", "contains"]),
            st.just(item),
            st.tuples(_lit(_texts)),
        ),
        st.tuples(st.sampled_from(["and", "or"]), _bools, _bools),
        _bools,
    )
    return st.tuples(st.sampled_from(["exists", "all"]), _lists, st.just(body_name), body)


_bools = st.deferred(
    lambda: st.one_of(
        _lit(st.booleans()),
        st.just(_field("negated")),
        st.tuples(st.sampled_from(["and", "or"]), _bools, _bools),
        st.tuples(st.just("not"), _bools),
        st.tuples(
            st.just("rel"),
            st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]),
            _strings,
            _strings,
        ),
        st.tuples(
            st.just("rel"), st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]), _ints, _ints
        ),
        st.tuples(st.just("rel"), st.just("in"), _strings, _lists),
        st.tuples(
            st.just("rel"),
            st.just("in"),
            _strings,
            st.lists(_lit(_texts), max_size=3).map(lambda items: ("list", tuple(items))),
        ),
        st.tuples(
            st.just("rel"),
            st.just("in"),
            _ints,
            st.lists(_lit(_scalars), max_size=3).map(lambda items: ("list", tuple(items))),
        ),
        st.tuples(
            st.just("mcall"),
            st.sampled_from(["startsWith", "endsWith", "contains", "matches", "other"]),
            _strings,
            st.tuples(_strings),
        ),
        st.tuples(
            st.just("mcall"),
            st.just("matches"),
            _strings,
            st.tuples(_lit(st.sampled_from(_PATTERNS))),
        ),
        st.tuples(
            st.just("call"),
            st.just("re_matches"),
            st.tuples(_strings, _lit(st.sampled_from(_PATTERNS))),
        ),
        st.tuples(st.just("call"), st.just("nothing"), st.tuples(_strings)),
        _comprehension("a"),
        _comprehension("segment"),  # the bound name shadows the variable
        _odd,
    )
)
FORMS = _bools
_well_typed = st.fixed_dictionaries(
    {
        "program": _texts,
        "command": _texts,
        "args": st.lists(_texts, max_size=4),
        "flags": st.lists(_texts, max_size=2),
        "env": st.dictionaries(_texts, _texts, max_size=2),
        "count": st.integers(-1, 3),
        "negated": st.booleans(),
        "pipeline": st.fixed_dictionaries({"size": st.integers(1, 3)}),
    }
)
ENVS = st.fixed_dictionaries(
    {
        "segment": st.one_of(
            _well_typed,
            _well_typed,
            _well_typed,
            st.dictionaries(st.sampled_from(["program", "args", "count", "env"]), _values),
        ),
        "x": _values,
    }
)


def _closure_value(form, env, functions=FUNCTIONS):
    guard = build_guard(form, functions)
    return guard(copy.deepcopy(env)) if guard is not None else UNKNOWN


def _compiled_many(forms, functions=FUNCTIONS) -> list:
    """Each form's generated function, compiled in one go (one compile per form takes ~1 ms)."""
    sources, namespace = [], {}
    for at, form in enumerate(forms):
        writer = _Writer(functions, constant_stem=f"K{at}_")
        sources.append(writer.function_source(form).replace("def guard(", f"def guard{at}(", 1))
        namespace.update(writer.constants)
    exec(compile("".join(sources), "<many forms>", "exec"), namespace)  # noqa: S102
    return [namespace[f"guard{at}"] for at in range(len(forms))]


def _same(got, want) -> bool:
    assert guard_code.faults == 0, "a compiled guard raised (and gave UNKNOWN)"
    return (type(got), got) == (type(want), want)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forms=st.lists(FORMS, min_size=1, max_size=3), envs=st.lists(ENVS, min_size=1, max_size=4))
def test_a_compiled_guard_gives_the_closure_value(forms, envs):
    """Random typed forms: the same value as the closure, and the environment left alone."""
    guards = [form_function(form, FUNCTIONS) for form in forms]
    for env in envs:
        before = copy.deepcopy(env)
        for form, guard in zip(forms, guards, strict=True):
            assert _same(guard(env), _closure_value(form, env))
        assert env == before  # a compiled guard never writes the environment


_GRID = ["", "a", "git", "a/b", 0, 2, -1, True, False, ["a", "b"], [1, 2], [], {"a": "b"}, "("]


def _grid_forms() -> list[tuple]:
    """Every node kind on every pair of operands from `_GRID`: literals, fields, unknown."""
    operands = [("lit", v) for v in _GRID if type(v) in (str, int, bool)]
    operands += [_field(f"v{at}") for at in range(len(_GRID))] + [("unknown",)]
    forms: list[tuple] = []
    for a in operands:
        forms += [("not", a), ("list", (a,)), ("mcall", "size", a, ())]
        forms += [
            ("call", name, (a,)) for name in ("size", "string", "twice", "boom", "count", "x")
        ]
        forms += [("call", "re_matches", (a, ("lit", p))) for p in ("it", "(", "^g", "a|b")]
        forms += [("mcall", "matches", a, (("lit", p),)) for p in ("it", "(", "^g", "a|b")]
        forms += [
            ("rel", "in", a, ("list", tuple(("lit", v) for v in values)))
            for values in (["git", "x"], [0, 2], [True], ["git", 2], [])
        ]
        for b in operands:
            forms += [("rel", op, a, b) for op in ("eq", "ne", "lt", "le", "gt", "ge", "in")]
            forms += [(kind, a, b) for kind in ("add", "index", "and", "or")]
            forms += [("list", (a, b)), ("call", "join", (a, b))]
            methods = ("startsWith", "endsWith", "contains", "matches", "x")
            forms += [("mcall", m, a, (b,)) for m in methods]
            forms += [(q, a, "a", ("rel", "eq", ("ident", "a"), b)) for q in ("exists", "all")]
    return forms


def test_every_node_kind_on_a_grid_of_operands():
    """Each node kind on literal, field and unknown operands of every type."""
    forms = _grid_forms()
    env = {"segment": {f"v{at}": value for at, value in enumerate(_GRID)}}
    guards = _compiled_many(forms)
    assert len(forms) > 10_000
    for form, guard in zip(forms, guards, strict=True):
        assert _same(guard(env), _closure_value(form, env)), form


def test_a_bound_name_shadows_a_variable_only_inside_its_body():
    """A comprehension variable named `segment` hides the variable inside its body only."""
    form = (
        "and",
        (
            "exists",
            ("dot", ("ident", "segment"), "args"),
            "segment",
            ("rel", "eq", ("ident", "segment"), ("lit", "-f")),
        ),
        ("rel", "eq", ("dot", ("ident", "segment"), "program"), ("lit", "git")),
    )
    env = {"segment": {"program": "git", "args": ["push", "-f"]}}
    guard = form_function(form, FUNCTIONS)
    assert guard(env) is True is _closure_value(form, env)
    env["segment"]["args"] = ["push"]
    assert guard(env) is False is _closure_value(form, env)


def test_a_read_made_in_a_branch_not_taken_is_not_used_after_it():
    """Reads belong to the block that made them: a later use in another branch reads again."""
    negated = _field("negated")
    args = _field("args")
    forms = [
        ("or", ("and", ("lit", False), negated), ("not", negated)),
        (
            "and",
            ("or", ("lit", True), ("rel", "eq", _field("program"), ("lit", "git"))),
            ("rel", "eq", _field("program"), ("lit", "git")),
        ),
        (
            "and",
            ("exists", ("list", ()), "a", ("rel", "in", ("ident", "a"), args)),
            ("rel", "eq", ("call", "size", (args,)), ("lit", 2)),
        ),
        ("all", args, "a", ("exists", args, "b", ("rel", "eq", ("ident", "b"), ("ident", "a")))),
        ("or", ("call", "nothing", (negated,)), ("not", negated)),  # an unknown function's reads
    ]
    for env in ({"segment": {"negated": False, "program": "git", "args": ["x", "y"]}}, {}):
        for form in forms:
            assert _same(form_function(form, FUNCTIONS)(env), _closure_value(form, env)), form


def test_forms_equal_as_tuples_but_not_as_guards_get_their_own_function():
    """`("lit", 1) == ("lit", True)` in Python: the compiled guards are not shared by equality."""
    compiled = CompiledGuards(FUNCTIONS)
    as_int = compiled(("rel", "eq", _field("count"), ("lit", 1)))
    as_bool = compiled(("rel", "eq", _field("count"), ("lit", True)))
    env = {"segment": {"count": 1}}
    assert as_int(env) is True and as_bool(env) is UNKNOWN


def test_a_form_too_deep_to_compile_keeps_its_closure():
    """A form nested past Python's block limit (20 loops) is not compiled: its closure stays."""
    form: tuple = ("rel", "eq", ("dot", ("ident", "segment"), "program"), ("lit", "git"))
    for at in range(30):
        form = ("and" if at % 2 else "or", form, ("dot", ("ident", "segment"), "negated"))
        form = ("exists", ("dot", ("ident", "segment"), "args"), "a", form)
    assert form_function(form, FUNCTIONS) is None
    guard = CompiledGuards(FUNCTIONS)(form)
    env = {"segment": {"program": "git", "args": ["x"], "negated": False}}
    assert guard is not None and _same(guard(env), _closure_value(form, env))
    assert CompiledGuards(FUNCTIONS)(("unknown",)) is None is build_guard(("unknown",))


def _shipped():
    return load_policy_set([str(ROOT / "policies")])  # the session's shared cache


def _corpus() -> list[str]:
    path = ROOT / "tests" / "corpus" / "commands.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


CONTEXT = Context(agent="claude", claude_allow=("Bash(git status)",), claude_deny=("Bash(rm:*)",))


def test_the_shipped_forms_and_residuals_compiled_give_the_closure_values():
    """The packs' rule, output and file forms and plan residuals on corpus segments."""
    policies = _shipped()
    functions = guard_functions()
    programs: dict[str, None] = {}
    envs = []
    for text in _corpus()[::4]:
        line = parse(text)
        maps = [segment_value(s) for s in line.segments]
        for segment, value in zip(line.segments, maps, strict=True):
            env = dict(policies._context_values(CONTEXT))
            env["command"] = command_value(line, maps)
            env["segment"] = value
            envs.append(env)
            programs[segment.program] = None
    forms = {rule.guard: None for rule in policies.compiled_rules}
    forms.update((rule.output, None) for rule in policies.compiled_rules if rule.output)
    forms.update((f.when_guard, None) for f in policies.compiled_files)
    forms.update((f.consumer_guard, None) for f in policies.compiled_files)
    specialize = __import__("rtk_policy.policy.guards.specialize", fromlist=["Specializer"])
    specializer = specialize.Specializer(functions)
    for program in programs:
        forms.update(
            (specializer.specialize(r.guard, program), None) for r in policies.compiled_rules
        )
    forms_list = [form for form in forms if form and form[0] not in ("unknown", "lit")]
    guards = _compiled_many(forms_list, functions)
    closures = [build_guard(form, functions) for form in forms_list]
    assert len(envs) > 250 and len(forms_list) > 300
    for env in envs:
        for form, guard, closure in zip(forms_list, guards, closures, strict=True):
            assert _same(guard(env), closure(env)), (env["segment"]["text"], form)


def _evaluations(monkeypatch, after: int) -> list:
    """Every corpus evaluation (and its deny-only re-check), plans compiled `after` uses and the
    file guards after as many segments."""
    monkeypatch.setattr(plans_module, "COMPILE_AFTER", after)
    monkeypatch.setattr(policyset_module, "WARM_AFTER", after)
    policies = _shipped()
    found = []
    for text in _corpus():
        line = parse(text)
        for deny_only in (False, True):
            evaluation = policies.evaluate(line, CONTEXT, deny_only=deny_only)
            found.append((text, deny_only, evaluation.results, evaluation.errors))
    return found, policies


def test_compiled_guards_change_no_evaluation(monkeypatch):
    """Whole evaluations (and deny-only re-checks) of the corpus, guards compiled and not."""
    closures, before = _evaluations(monkeypatch, 10**9)
    compiled, after = _evaluations(monkeypatch, 2)  # a program's first segment: closures
    assert before._planner._compiler is None
    assert len(after._planner._compiler._made) > 100
    assert all(g is None or g.__name__ == "guard" for g in after._when_guards)
    assert after._consumers and all(g.__name__ == "guard" for _, g in after._consumers)
    assert compiled == closures


def test_a_program_plan_is_compiled_once_met_often(monkeypatch):
    """A program's plan has closures until its COMPILE_AFTER-th use, then compiled guards."""
    monkeypatch.setattr(plans_module, "COMPILE_AFTER", 3)
    planner = _shipped()._planner
    first = planner.plan("git")
    assert first is planner.plan("git")  # second use: the same closures
    assert all(g is None or g.__name__ != "guard" for _, g in first)
    third = planner.plan("git")
    assert [i for i, _ in third] == [i for i, _ in first]
    assert all(g is None or g.__name__ == "guard" for _, g in third)
    assert planner.plan("git") is third


def test_a_program_planned_later_takes_the_forms_compiled_already(monkeypatch):
    """Once a plan is compiled, a program planned later takes at once the compiled guards of the
    forms it shares with that plan (the same form objects) and keeps closures for the others."""
    monkeypatch.setattr(plans_module, "COMPILE_AFTER", 2)
    planner = _shipped()._planner
    ls_before = planner.plan("ls")  # planned before anything was compiled: closures only
    assert all(g is None or g.__name__ != "guard" for _, g in ls_before)
    planner.plan("git")
    git = dict(planner.plan("git"))  # its second use: compiled
    git_forms = {id(form) for _, form, _ in planner._planned("git")}
    cat = planner.plan("cat")  # planned after git's plan was compiled
    cat_forms = {index: form for index, form, _ in planner._planned("cat")}
    shared = [i for i, _ in cat if id(cat_forms[i]) in git_forms]
    assert len(shared) >= 10  # the rules every program tries share their forms
    for index, guard in cat:
        if index in shared:
            assert guard is git[index] and guard.__name__ == "guard"
        elif guard is not None:
            assert guard.__name__ != "guard"
    assert any(index not in shared and guard is not None for index, guard in cat)


def test_the_file_guards_are_compiled_once_warm(monkeypatch):
    """The `when` and consumer guards are closures until WARM_AFTER segments were evaluated."""
    monkeypatch.setattr(policyset_module, "WARM_AFTER", 3)
    policies = _shipped()
    policies.evaluate(parse("git status && ls"), CONTEXT)
    assert all(g.__name__ != "guard" for _, g in policies._consumers)
    policies.evaluate(parse("cat README.md"), CONTEXT)
    assert all(g.__name__ == "guard" for _, g in policies._consumers)


def test_the_outputs_met_once_warm_are_compiled(monkeypatch):
    """A rewrite's output form is a closure until WARM_AFTER segments were evaluated, then a
    compiled guard; the rewrite is the same."""
    monkeypatch.setattr(policyset_module, "WARM_AFTER", 3)
    policies = _shipped()
    cold = policies.evaluate(parse("git status"), CONTEXT).results[0].rewrite
    assert cold is not None and cold.rewrite
    assert all(g is None or g.__name__ != "guard" for g in policies._outputs.values())
    policies.evaluate(parse("ls && cat README.md"), CONTEXT)  # now warm
    warm = policies.evaluate(parse("git status"), CONTEXT).results[0].rewrite
    assert warm == cold
    assert policies._outputs and all(g.__name__ == "guard" for g in policies._outputs.values())


def test_a_compiled_search_runs_the_regex_after_the_inline_pre_test_only():
    """`x.matches("p")` compiled: the required literals are tested inline, then the lazily
    compiled regex (`values.lazy_search`) decides; an invalid pattern is `UNKNOWN`."""
    from rtk_policy.policy.guards.values import lazy_search

    guard = form_function(("mcall", "matches", _field("text"), [("lit", "^git push")]), {})
    assert guard({"segment": {"text": "git push -f"}}) is True
    assert guard({"segment": {"text": "git pull"}}) is False
    assert guard({"segment": {"text": 3}}) is UNKNOWN
    assert lazy_search("(")("anything") is UNKNOWN
    assert lazy_search("a+b")("xaab") is True and lazy_search("a+b")("ba") is False
