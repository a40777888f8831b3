"""`rtk-policy explain CMD [--all] [--json] [--agent NAME]`: the segments as parsed, the rules that
matched each (every rule tried with `--all`), the verdict and why; with an agent's name, also its
wire answer and what its CLI does with it. The command's words are taken as `rewrite` takes them."""

from __future__ import annotations

import json
import os
from typing import IO, TYPE_CHECKING, Any

from rtk_policy.agents import AGENTS, agent_module
from rtk_policy.agents.common import notes, rewritten_of
from rtk_policy.agents.samples import sample_payload
from rtk_policy.engine.answers import command_words, exit_code, join_words, request_context
from rtk_policy.util import record
from rtk_policy.util.term import paint, wants_colour

if TYPE_CHECKING:
    from rtk_policy.decision import Decision
    from rtk_policy.engine.pipeline import Engine, Outcome

_FLAGS = ("parse_error", "unattestable", "has_substitution", "has_heredoc", "has_here_string",
          "has_file_redirect", "multiline", "rewrite_refused")


def run(
    *,
    cmd: list[str],
    agent: str = "",
    as_json: bool = False,
    every: bool = False,
    policies: list[str] | None = None,
    backend: str | None = None,
    config: str | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Entry point of `rtk-policy explain CMD`: the rules that matched (`every`: every rule tried)
    and the decision, as text or `as_json`; with a known `agent`, also its hook's answer."""
    from rtk_policy.engine.pipeline import load_engine

    try:
        engine = load_engine(policies, backend, config)
    except Exception as error:  # noqa: BLE001 - a load error is reported, not raised
        stderr.write(f"rtk-policy: cannot load policies:\n{error}\n")
        return 1
    words = command_words(cmd)
    if not words:
        from rtk_policy.commands import EX_USAGE

        stderr.write("rtk-policy explain: give a command\n")
        return EX_USAGE
    command = join_words(words)
    context = request_context(engine, os.getcwd(), agent=agent)
    outcome = engine.evaluate(command, context, trace=True)
    answer = None
    if agent in AGENTS:
        answer = agent_answer(agent, hook_decision(engine, outcome.decision, agent), command)
    if as_json:
        data = explain_data(outcome)
        if answer is not None:
            data["agent"] = answer
        stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        stdout.write(explain_text(outcome, every=every, colour=wants_colour(stdout), agent=answer))
    return 0


def hook_decision(engine: Engine, decision: Decision, agent: str) -> Decision:
    """`decision` as the hook would hand it to `agent` from this process: its rewrite dropped where
    `engine.gating` drops it (the agent's command line is looked for above this process)."""
    from rtk_policy.engine.gating import host_decision
    from rtk_policy.settings.agent_rules import CLI_RULE_AGENTS, command_line_rules

    seen = False
    if agent in CLI_RULE_AGENTS and decision.rewritten is not None:
        seen = command_line_rules(agent, None).seen
    return host_decision(decision, engine.config, agent, seen)


def agent_answer(agent: str, decision: Decision, command: str) -> dict[str, object]:
    """What `agent`'s hook answers for `decision` (its wire JSON, None for no output) and the notes
    on what the agent's CLI does with that answer."""
    module = agent_module(agent)
    request = module.parse_request(sample_payload(agent, command, os.getcwd()))
    line = module.render(decision, request) if request is not None else None
    rewritten = rewritten_of(decision, request) is not None if request is not None else False
    return {
        "name": agent,
        "answer": json.loads(line) if line else None,
        "notes": notes(module, decision.verdict, rewritten),
    }


def explain_data(outcome: Outcome) -> dict[str, Any]:
    """The explanation as plain data (what `--json` prints)."""
    line = outcome.command_line
    decision = outcome.decision
    segments = []
    for segment, result in zip(line.segments, outcome.evaluation.results, strict=True):
        data = record.asdict(segment)
        data["rules"] = [
            {"id": tried.rule.id, "kind": tried.rule.kind, "decision": tried.rule.decision,
             "mode": tried.rule.mode, "matched": tried.matched, "message": tried.message,
             "rewrite": tried.rewrite, "error": tried.error}
            for tried in result.tried
        ]
        data["safe_consumer"] = result.safe_consumer
        segments.append(data)
    code, stdout = exit_code(decision)
    return {
        "command": line.text,
        "flags": {flag: getattr(line, flag) for flag in _FLAGS},
        "error": line.error,
        "segments": segments,
        "decision": record.asdict(decision),
        "exit": code,
        "stdout": stdout,
        "policy_digest": outcome.evaluation.policy_digest,
        "backend": outcome.evaluation.backend,
    }


def explain_text(
    outcome: Outcome, every: bool = False, colour: bool = False, agent: dict | None = None
) -> str:
    """The explanation for a person at a terminal: per segment the rules that matched (`every`:
    every rule tried), then the verdict and why; `colour` paints the verdict and the matches;
    `agent` (`agent_answer`) adds that agent's answer and notes."""
    data = explain_data(outcome)
    out = [f"command: {data['command']!r}"]
    flags = [flag for flag, on in data["flags"].items() if on]
    out.append(f"facts:   {', '.join(flags) if flags else 'none'}")
    if data["error"]:
        out.append(f"parser:  {data['error']}")
    for segment in data["segments"]:
        out.extend(_segment_lines(segment, every, colour))
    out.extend(_decision_lines(data, colour))
    if agent is not None:
        out.extend(_agent_lines(agent))
    if not every:
        out.append("(--all lists every rule tried)")
    return "\n".join(out) + "\n"


def _agent_lines(agent: dict) -> list[str]:
    answer = agent["answer"]
    shown = "nothing (no output)" if answer is None else json.dumps(answer, ensure_ascii=False)
    lines = ["", f"agent:   {agent['name']}", f"answer:  {shown}"]
    lines.extend(f"  note:  {note}" for note in agent["notes"])
    return lines


def _segment_lines(segment: dict, every: bool, colour: bool) -> list[str]:
    indent = "  " * segment["depth"]
    lines = [
        "",
        f"{indent}segment {segment['index']} ({segment['origin']}, depth {segment['depth']}): "
        f"{segment['text']!r}",
        f"{indent}  program {segment['program']!r}  subcommand {segment['subcommand']!r}  "
        f"args {segment['args']}",
    ]
    extras = [
        f"{name} {segment[name]}" for name in ("wrappers", "env", "redirects") if segment[name]
    ]
    if segment["pipeline_size"] > 1:
        extras.append(f"pipeline stage {segment['pipeline_index'] + 1}/{segment['pipeline_size']}")
    if extras:
        lines.append(f"{indent}  " + "  ".join(str(e) for e in extras))
    if not segment["rules"]:
        lines.append(f"{indent}  no rule applies to this program")
    shown = [r for r in segment["rules"] if every or r["matched"] or r["error"]]
    for rule in shown:
        lines.append(f"{indent}  {_rule_line(rule, colour)}")
    hidden = len(segment["rules"]) - len(shown)
    if hidden:
        lines.append(f"{indent}  {hidden} other rule(s) tried, none matched")
    return lines


def _rule_line(rule: dict, colour: bool = False) -> str:
    mark = "✔" if rule["matched"] else "·"
    what = rule["decision"] or "rewrite"
    text = f"{mark} {rule['id']} [{what}, {rule['mode']}]"
    if rule["matched"]:
        text = paint(text, rule["decision"] or "bold", colour)
    if rule["error"]:
        return f"{text} error: {rule['error']}"
    if rule["matched"] and rule["rewrite"] is not None:
        return f"{text} → {rule['rewrite']!r}"
    if rule["matched"] and rule["message"]:
        return f"{text}: {rule['message']}"
    return text if rule["matched"] else f"{text} no match"


def _decision_lines(data: dict, colour: bool = False) -> list[str]:
    decision = data["decision"]
    verdict = paint(decision["verdict"], decision["verdict"], colour)
    lines = ["", f"verdict: {verdict}  (rewrite exit code {data['exit']})"]
    lines.extend(f"  because: {reason}" for reason in decision["reasons"])
    lines.extend(f"  warning: {warning}" for warning in decision["warnings"])
    if decision["rewrite"] is None:
        lines.append("rewrite: none selected")
    elif decision["rewritten"] is not None:
        lines.append(f"rewrite: {decision['rewritten']!r}")
    else:
        lines.append(f"rewrite: {decision['rewrite']!r} selected, withheld ({decision['gate']})")
    if decision["rule_ids"]:
        lines.append(f"rules:   {', '.join(decision['rule_ids'])}")
    return lines
