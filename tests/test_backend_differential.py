"""DESIGN §7: the shipped policies give identical decisions on both CEL backends.

Every command of the golden corpus (`tests/corpus/commands.txt` and `multiline.jsonl`, all of
them, no sampling) is decided under the shipped packs on cel-expr and on cel-python, once without
Claude Code rules and once with a fixed set; the whole `Decision` must be equal (verdict, rewrite,
rewritten, reasons, rule ids, warnings, gate). `rtk-policy check --backend both` must pass on the
shipped packs, which runs every rule's examples on both backends. About 40 s on 2 cores (cel-python
takes ~15 ms a command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rtk_policy.util import record
import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.backends.select import available_backends
from rtk_policy.policytest.plugin import read_corpus

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"
CORPUS = ROOT / "tests" / "corpus"
COMMANDS = read_corpus(CORPUS / "commands.txt") + read_corpus(CORPUS / "multiline.jsonl")
#: the Claude Code rule sets (patterns inside `Bash(...)`), as in the golden tests
RULE_SETS = {
    "no_rules": {},
    "rules": {
        "claude_allow": ("git *", "cargo *", "npm run *", "ls *"),
        "claude_deny": ("rm -rf /",),
        "claude_ask": ("git push *",),
    },
}
#: the Decision fields compared, in the order a mismatch is reported
FIELDS = (
    "verdict",
    "rewrite",
    "rewritten",
    "reasons",
    "rule_ids",
    "warnings",
    "audit_rule_ids",
    "gate",
)

pytestmark = pytest.mark.skipif(
    available_backends() != ["cel-expr", "cel-python"], reason="needs both CEL backends"
)


@pytest.fixture(scope="module")
def engines() -> dict[str, Engine]:
    """The shipped packs loaded on each backend (no compiled cache, no user config or audit)."""
    return {
        name: Engine(
            policies=load_policy_set([str(POLICIES)], backend=name, use_cache=False),
            config=Config(audit_enabled=False),
        )
        for name in ("cel-expr", "cel-python")
    }


def _mismatches(engines: dict[str, Engine], rules: dict[str, Any]) -> list[str]:
    found = []
    contexts = {
        name: engine.context(agent="claude", cwd="/work/app", tool_name="Bash", **rules)
        for name, engine in engines.items()
    }
    for command in COMMANDS:
        primary, second = (
            engines[n].decide(command, contexts[n]) for n in ("cel-expr", "cel-python")
        )
        if primary != second:
            diff = {
                field: (getattr(primary, field), getattr(second, field))
                for field in FIELDS
                if getattr(primary, field) != getattr(second, field)
            }
            found.append(f"{command!r}: cel-expr vs cel-python {diff or record.asdict(second)}")
    return found


def test_corpus_has_both_files() -> None:
    """The corpus read here is the full golden corpus, multi-line cases included."""
    assert len(COMMANDS) > 1000
    assert any("\n" in command for command in COMMANDS)


@pytest.mark.parametrize("rule_set", sorted(RULE_SETS))
def test_backends_decide_the_corpus_identically(engines: dict[str, Engine], rule_set: str) -> None:
    """Every corpus command gets the same Decision on cel-expr and cel-python."""
    backends = {e.policies.backend for e in engines.values()}  # type: ignore[attr-defined]
    assert backends == {"cel-expr", "cel-python"}
    mismatches = _mismatches(engines, RULE_SETS[rule_set])
    assert not mismatches, f"{len(mismatches)} mismatch(es):\n" + "\n".join(mismatches[:25])


def test_check_both_backends_on_the_shipped_packs(capsys: pytest.CaptureFixture[str]) -> None:
    """`rtk-policy check --backend both` compiles the packs and passes every example on both."""
    from rtk_policy.main import main

    code = main(["check", "--backend", "both", str(POLICIES)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "compiled on cel-expr" in out and "compiled on cel-python" in out, out


#: expressions where celpy's transpiled code and CEL differ unless the backend corrects it (errors
#: absorbed by `||`/`&&`, `exists`/`all` over elements that fail, dyn field access, `has()`)
EDGE_EXPRESSIONS = (
    "[0, 0, 1].exists(x, 1 / x == 1)",
    "[0, 2].exists(x, 1 / x == 1)",
    "[0, 0, 2].all(x, 1 / x == 1)",
    "[1, 0].all(x, 1 / x == 1)",
    "[].exists(x, x == 1) || [].all(x, x == 1)",
    "ctx.tool_input.command.nope == 1 || true",
    "ctx.tool_input.command.nope == 1",
    "segment.args[5] == 'x' || segment.args.size() == 2",
    "has(segment.env.X) && !has(segment.env.Y) && 'X' in segment.env",
    "segment.args.exists(a, segment.args.exists(b, a + b == '-ab'))",
    "segment.args.exists(a, re_find(a + '(', a) == '') || true",  # invalid at run time
    "claude.allow.exists(p, bash_rule_matches(p, 'git -a b'))",
)
_VALUES = {
    "segment": {"program": "git", "args": ["-a", "b"], "env": {"X": "1"}},
    "ctx": {"tool_input": {"command": "git -a b"}},
    "claude": {"allow": ["git *"], "deny": [], "ask": []},
}


def _outcome(backend: Any, source: str, through_cache: bool) -> object:
    from rtk_policy.policy.backends.select import EvalError

    program, _ = backend.compile(source, "bool")
    if through_cache:
        program = backend.restore(backend.dump(program), "bool")
    try:
        return backend.run_bool(program, backend.activation(_VALUES))
    except EvalError:
        return "error"


@pytest.mark.parametrize("source", EDGE_EXPRESSIONS)
def test_backends_agree_on_error_handling(source: str) -> None:
    """True, false or an evaluation error alike on both backends, also after a cache round trip."""
    from rtk_policy.policy.backends.select import get_backend

    primary = _outcome(get_backend("cel-expr"), source, through_cache=False)
    for through_cache in (False, True):
        assert _outcome(get_backend("cel-python"), source, through_cache) == primary, source
