"""`rtk-policy replay [INPUTS]`: evaluate past commands (Claude Code transcripts, audit logs) under a
candidate policy set (`--policies`) and report what would change against what happened."""

from __future__ import annotations

import json
import time
from typing import IO

_ARROW = "→"


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Entry point of `rtk-policy replay`."""
    from rtk_policy.replay.run import EngineSpec, Progress, choose_jobs, make_evaluator, replay
    from rtk_policy.replay.sources import default_inputs, input_files

    inputs = args.inputs or default_inputs()  # type: ignore[attr-defined]
    try:
        files = input_files(inputs)
    except FileNotFoundError as error:
        stderr.write(f"rtk-policy: {error}\n")
        return 1
    if not files:
        stderr.write("rtk-policy: no transcripts or audit logs to replay (give files or folders)\n")
        return 1
    from rtk_policy.policy.load import with_shipped

    shipped = not getattr(args, "no_shipped", False)
    given = args.policies or []  # type: ignore[attr-defined]
    policies = tuple(with_shipped(given, shipped)) if given else None
    given_baseline = getattr(args, "baseline", None) or []
    baseline = tuple(with_shipped(given_baseline, shipped)) if given_baseline else None
    spec = EngineSpec(
        policies=policies, baseline=baseline, compare=policies != baseline,
        backend=args.backend, config=args.config,  # type: ignore[attr-defined]
        claude_rules=not getattr(args, "no_claude_rules", False),
    )
    try:
        evaluator = make_evaluator(spec)  # also gives the candidate's rule list
    except Exception as error:  # noqa: BLE001 - a load error is reported, not raised
        render = getattr(error, "render", None)
        stderr.write(f"rtk-policy: cannot load policies:\n{render() if render else error}\n")
        return 1
    jobs = choose_jobs(args.jobs, files)  # type: ignore[attr-defined]
    limit = max(int(getattr(args, "examples", 3)), 0)
    started = time.monotonic()
    bar = Progress(stderr, sum(_size(name) for name in files))
    tally = replay(files, spec, jobs, limit, bar, evaluator if jobs <= 1 else None)
    rule_ids = [rule.id for rule in evaluator.candidate.policies.rules]  # type: ignore[attr-defined]
    data = report_data(tally, rule_ids, len(files), time.monotonic() - started, jobs, spec)
    stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n" if args.json  # type: ignore[attr-defined]
                 else render_text(data))
    return 0


def _size(name: str) -> int:
    import os

    return os.path.getsize(name)


def report_data(
    tally: object, rule_ids: list[str], files: int, seconds: float, jobs: int, spec: object
) -> dict[str, object]:
    """The replay report as plain data (what `--json` prints)."""
    t = tally
    changes = [
        {"from": before, "to": after, "count": count,
         "examples": t.examples.get(f"{before}->{after}", [])}  # type: ignore[attr-defined]
        for (before, after), count in t.changes.most_common()  # type: ignore[attr-defined]
    ]
    happened: dict[str, dict[str, int]] = {}
    for (what, verdict), count in sorted(t.happened.items()):  # type: ignore[attr-defined]
        happened.setdefault(what, {})[verdict] = count
    rewrites = {
        kind: {"count": t.rewrites.get(kind, 0), "examples": t.examples.get(kind, [])}  # type: ignore[attr-defined]
        for kind in ("gained", "lost", "changed")
    }
    rewrites["kept"] = {"count": t.rewrites.get("kept", 0), "examples": []}  # type: ignore[attr-defined]
    hits = t.rule_hits  # type: ignore[attr-defined]
    return {
        "commands": t.commands,  # type: ignore[attr-defined]
        "files": files,
        "seconds": round(seconds, 3),
        "jobs": jobs,
        "candidate": list(spec.policies) if spec.policies else "search path",  # type: ignore[attr-defined]
        "baseline": _baseline_label(spec),
        "verdicts": {"baseline": dict(t.baseline), "candidate": dict(t.candidate)},  # type: ignore[attr-defined]
        "unchanged": t.commands - t.errors - sum(t.changes.values()),  # type: ignore[attr-defined]
        "verdict_changes": changes,
        "happened": happened,
        "rewrites": rewrites,
        "rules": {"hits": {rule_id: hits[rule_id] for rule_id in rule_ids if hits.get(rule_id)},
                  "never_hit": [rule_id for rule_id in rule_ids if not hits.get(rule_id)]},
        "errors": {"count": t.errors, "examples": t.examples.get("errors", [])},  # type: ignore[attr-defined]
    }


def _baseline_label(spec: object) -> str | list[str]:
    base = "recorded verdicts (audit logs); for transcripts: "
    if not spec.compare:  # type: ignore[attr-defined]
        return base + "the candidate itself"
    return base + (", ".join(spec.baseline) if spec.baseline else "the search path")  # type: ignore[attr-defined]


def render_text(data: dict) -> str:  # type: ignore[type-arg]
    """The report for a terminal."""
    lines = [f"replayed {data['commands']:,} commands from {data['files']} file(s) in "
             f"{data['seconds']:.1f} s ({data['jobs']} process(es))",
             f"candidate: {_label(data['candidate'])}", f"baseline: {data['baseline']}", ""]
    verdicts = data["verdicts"]
    lines.append("verdicts        baseline → candidate")
    for verdict in ("allow", "ask", "deny", "none"):
        lines.append(f"  {verdict:<8} {verdicts['baseline'].get(verdict, 0):>12,} → "
                     f"{verdicts['candidate'].get(verdict, 0):,}")
    lines.append(f"\nverdict changes: {sum(c['count'] for c in data['verdict_changes']):,} "
                 f"({data['unchanged']:,} unchanged)")
    for change in data["verdict_changes"]:
        lines.append(f"  {change['from']:>5} {_ARROW} {change['to']:<6} {change['count']:>8,}")
        lines.extend(_examples(change["examples"]))
    if data["happened"]:
        lines.append("\nwhat happened → candidate verdict")
        for what, verdicts_now in data["happened"].items():
            counts = ", ".join(f"{v} {n:,}" for v, n in sorted(verdicts_now.items()))
            lines.append(f"  {what:<8} {counts}")
    rewrites = data["rewrites"]
    lines.append(f"\nrewrites: {rewrites['gained']['count']:,} gained, {rewrites['lost']['count']:,} "
                 f"lost, {rewrites['changed']['count']:,} changed, {rewrites['kept']['count']:,} kept")
    for kind in ("gained", "lost", "changed"):
        for example in rewrites[kind]["examples"]:
            lines.append(f"    {kind}: {example['command']!r} {_ARROW} {example['after']['rewrite']!r}"
                         f" (was {example['before']['rewrite']!r}) at {example['location']}")
    never = data["rules"]["never_hit"]
    lines.append(f"\nrules never hit ({len(never)}): {', '.join(never) or '-'}")
    top = sorted(data["rules"]["hits"].items(), key=lambda kv: -kv[1])[:10]
    lines.append("top rules: " + (", ".join(f"{rule} {n:,}" for rule, n in top) or "-"))
    errors = data["errors"]
    lines.append(f"errors: {errors['count']:,}")
    lines.extend(f"    {e['location']}: {e['command']!r}: {e['error']}" for e in errors["examples"])
    return "\n".join(lines) + "\n"


def _label(value: object) -> str:
    return ", ".join(value) if isinstance(value, list) else str(value)


def _examples(examples: list) -> list[str]:  # type: ignore[type-arg]
    return [f"      e.g. {e['command']!r} ({e['happened']}) at {e['location']}" for e in examples]
