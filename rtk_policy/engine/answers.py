"""The rewrite contract (DESIGN §2): a decision as `rewrite`'s exit code and stdout, and as one
`--batch` answer line; the engine context of a request made from the command line."""

from __future__ import annotations

import json
import shlex
from json.encoder import encode_basestring

from rtk_policy.decision import VERDICT_ALLOW, VERDICT_ASK, VERDICT_DENY, VERDICT_NONE, Decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy.model import Context

EXIT_ALLOW, EXIT_DEFER, EXIT_DENY, EXIT_ASK = 0, 1, 2, 3
FAIL_EXIT = {"open": EXIT_DEFER, "closed": EXIT_ASK, "deny": EXIT_DENY}


def exit_code(decision: Decision, openclaw: bool = False) -> tuple[int, str]:
    """The exit code and stdout text of `rewrite` for a decision.

    `openclaw` is RTK's `RTK_REWRITE_HOST=openclaw` delegate mode: a rewrite that no rule asked for
    exits 0, because that host gates the rewritten command itself (reference §2.3).
    """
    if decision.verdict == VERDICT_DENY:
        return EXIT_DENY, ""
    if decision.gate == "unattestable":
        return EXIT_DEFER, ""
    shown = decision.rewritten
    if shown is None and decision.gate == "identity":
        shown = decision.rewrite
    if shown is not None:
        if decision.verdict == VERDICT_ALLOW or (openclaw and decision.verdict == VERDICT_NONE):
            return EXIT_ALLOW, shown
        return EXIT_ASK, shown
    if decision.verdict == VERDICT_ASK:
        return EXIT_ASK, decision.command
    return EXIT_DEFER, ""


def command_words(words: list[str]) -> list[str]:
    """The command's words from the CLI's: a leading `--` (the end of the subcommand's own
    options) dropped."""
    return words[1:] if words[:1] == ["--"] else list(words)


def join_words(words: list[str]) -> str:
    """One command from the CLI words: a single word as typed, several joined with shell quoting."""
    if len(words) == 1:
        return words[0]
    return " ".join(shlex.quote(word) for word in words)


def request_context(engine: Engine, cwd: str, agent: str = "", **fields: Any) -> Context:
    """The engine context for a request made from `cwd`, with the rules of `agent` (the host's own
    permission rules, `rtk_policy.settings.agent_rules`; Claude Code's by default) and its project
    folder found as the hook finds it (so `rm -rf ../build` from a subfolder stays inside it)."""
    from rtk_policy.settings.agent_rules import load_agent_rules
    from rtk_policy.settings.claude_rules import agent_project_dir

    fields.setdefault("project_dir", agent_project_dir(agent or "claude", cwd))

    deny, ask, allow, keep = load_agent_rules(agent or "claude", cwd)
    if keep:
        fields["exclude_commands"] = (*engine.config.exclude_commands, *keep)
    return engine.context(
        agent=agent, cwd=cwd, claude_deny=deny, claude_ask=ask, claude_allow=allow, **fields
    )


def batch_answer(decision: Decision) -> dict[str, object]:
    """The JSON object `--batch` prints for one decided line."""
    code, text = exit_code(decision)
    return {
        "exit": code,
        "stdout": text,
        "verdict": decision.verdict,
        "rewrite": decision.rewrite,
        "rules": list(decision.rule_ids),
    }


def batch_line(decision: Decision) -> str:
    """`dumps(batch_answer(decision))`, byte for byte, written out without the encoder's
    machinery (its Python-level set-up per call outweighs the C encoding of five fields)."""
    code, text = exit_code(decision)
    rewrite = decision.rewrite
    return (
        f'{{"exit":{code:d},"stdout":{encode_basestring(text)},'
        f'"verdict":{encode_basestring(decision.verdict)},'
        f'"rewrite":{"null" if rewrite is None else encode_basestring(rewrite)},'
        f'"rules":[{",".join(map(encode_basestring, decision.rule_ids))}]}}'
    )


def dumps(obj: object) -> str:
    """Compact JSON for one output line."""
    return _COMPACT(obj)


#: `json.dumps(obj, ensure_ascii=False, separators=(",", ":"))` without building an encoder per
#: call (json.dumps does for any option): 7.2 -> 4.7 us for a batch answer
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
