"""16 processes × 200 `record()` calls at once: no torn, interleaved or lost line; chain holds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from rtk_policy.audit import anchor as audit_anchor
from rtk_policy.audit.verify import verify

PROCESSES, CALLS = 16, 200

WRITER = textwrap.dedent(
    """
    import sys
    from rtk_policy.audit import log as audit
    from rtk_policy.config.load import Config
    from rtk_policy.decision import Decision

    path, worker, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    config = Config(audit_path=path)
    for call in range(calls):
        command = f"git status worker={worker} call={call} " + "x" * (call % 97)
        decision = Decision(
            verdict="allow", command=command, rewrite="rtk " + command, rewritten="rtk " + command,
            reasons=(), rule_ids=("git-read-only",), warnings=(), audit_rule_ids=(), gate="",
        )
        request = {"command": command, "session_id": str(worker)}
        audit.record(config, agent="claude", request=request, decision=decision, total_us=call)
    """
)


def test_parallel_writers_lose_nothing(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    log = tmp_path / "state" / "audit.jsonl"
    python = "/work/venv/bin/python" if Path("/work/venv/bin/python").exists() else sys.executable
    workers = [
        subprocess.Popen(
            [python, str(script), str(log), str(n), str(CALLS)], stderr=subprocess.PIPE
        )
        for n in range(PROCESSES)
    ]
    errors = [worker.communicate(timeout=300)[1] for worker in workers]
    assert [worker.returncode for worker in workers] == [0] * PROCESSES
    assert errors == [b""] * PROCESSES  # record() never had to swallow a failure

    raw = log.read_bytes()
    assert raw.endswith(b"\n")
    records = [json.loads(line) for line in raw.decode().splitlines()]
    assert len(records) == PROCESSES * CALLS
    seen = {(r["session_id"], r["total_us"]) for r in records}
    assert seen == {(str(w), c) for w in range(PROCESSES) for c in range(CALLS)}
    assert len({r["hash"] for r in records}) == len(records)

    result = verify(str(log))
    assert result.ok and result.records == PROCESSES * CALLS
    anchor, why = audit_anchor.load(audit_anchor.anchor_path(str(log)))
    assert why == "" and anchor["records"] == PROCESSES * CALLS  # no append missed the anchor
    assert anchor["head"] == records[-1]["hash"] and anchor["files"][0]["size"] == len(raw)


def test_deleting_a_middle_line_after_a_parallel_run_is_named(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    log = tmp_path / "audit.jsonl"
    python = "/work/venv/bin/python" if Path("/work/venv/bin/python").exists() else sys.executable
    workers = [subprocess.Popen([python, str(script), str(log), str(n), "25"]) for n in range(4)]
    assert [worker.wait(timeout=120) for worker in workers] == [0] * 4
    content = log.read_text().splitlines()
    del content[49]
    log.write_text("\n".join(content) + "\n")
    result = verify(str(log))
    assert not result.ok and result.problem.startswith(f"{log}:50: prev does not match")
