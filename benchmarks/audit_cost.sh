#!/usr/bin/env bash
# The cold hook's cost of the audit anchor, the keyed chain and syslog forwarding (issue 15, point 6):
# `rtk-policy hook claude` on a one-segment payload, cold (no server), from a checkout of BEFORE (default
# 649a014, the chain without an anchor) and from this tree, each with its own HOME/XDG tree, timed in
# ROUNDS short hyperfine runs beside bare `python -c pass` (the rows taking turns, as run.sh does), then
# in turns one run each (benchmarks/interleaved.py). Also the append alone, in-process (µs per record,
# a fresh process's path: nothing remembered).
# Usage: [BEFORE=REV] [ROUNDS=10] benchmarks/audit_cost.sh [PYTHON] [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/common.sh
. benchmarks/common.sh
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }
BEFORE=${BEFORE:-649a014}
mkdir -p "$state/before"
git archive "$BEFORE" rtk_policy | tar -x -C "$state/before"
"$PY" -m compileall -q "$state/before/rtk_policy" >/dev/null
HOOK="$(dirname "$PY")/rtk-policy"
"$PY" -c 'import json; print(json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl",
  "cwd": "/tmp", "hook_event_name": "PreToolUse", "tool_name": "Bash",
  "tool_input": {"command": "git status"}}))' >"$state/one.json"
head -c 32 /dev/urandom >"$state/audit.key"

variant() {  # variant NAME TREE [CONFIG-TOML]: prints the env prefix of a private tree for it
  local home="$state/$1"
  mkdir -p "$home/config/rtk-policy"
  printf '%b' "${3:-}" >"$home/config/rtk-policy/config.toml"
  echo "env -i PYTHONPATH=$2 HOME=$home XDG_CONFIG_HOME=$home/config XDG_STATE_HOME=$home/state XDG_CACHE_HOME=$home/cache XDG_RUNTIME_DIR=$home/none PATH=/usr/bin:/bin"
}
names=("before: chain only ($BEFORE)" "after: chain + anchor" "after: + HMAC key"
  "after: + syslog udp://127.0.0.1:9" "after: + syslog unix socket")
sock="$state/log.sock"
"$PY" -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
while True: s.recv(1 << 20)' "$sock" & sink=$!
trap 'kill $sink 2>/dev/null; cleanup' EXIT
envs=("$(variant before "$state/before")" "$(variant after "$ROOT")"
  "$(variant keyed "$ROOT" "[audit]\nkey_file = \"$state/audit.key\"\n")"
  "$(variant udp "$ROOT" '[audit.syslog]\ntarget = "udp://127.0.0.1:9"\n')"
  "$(variant unix "$ROOT" "[audit.syslog]\ntarget = \"unix:$sock\"\n")")
bare="${envs[1]} $PY -c pass"
for at in "${!names[@]}"; do  # compile each tree's policy cache, and check the answer
  ${envs[$at]} "$HOOK" hook claude <"$state/one.json" | grep -q "rtk git status" || echo "warning: ${names[$at]}: no rewrite" >&2
done
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); python: $("$PY" -V)"
for _ in $(seq 1 "$ROUNDS"); do
  args=(-n "python -c pass" "$bare <$state/one.json")
  for at in "${!names[@]}"; do args+=(-n "${names[$at]}" "${envs[$at]} $HOOK hook claude <$state/one.json"); done
  hyperfine --warmup 2 --runs "$BURST" --export-json "$state/round.json" "${args[@]}" >/dev/null 2>&1
  "$PY" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["results"]))' "$state/round.json" >>"$state/rounds.jsonl"
done
"$PY" - "$state/rounds.jsonl" <<'PYEOF'
import json, statistics, sys
rounds = [json.loads(line) for line in open(sys.argv[1])]
print(f"hyperfine, {len(rounds)} rounds: median time, and median (min-max) ratio to bare python per round")
for at, first in enumerate(rounds[0]):
    times = [r[at]["median"] * 1000 for r in rounds]
    ratios = [r[at]["median"] / r[0]["median"] for r in rounds]
    deltas = [(r[at]["median"] - r[1]["median"]) * 1000 for r in rounds] if at > 1 else []
    extra = f"   vs before {statistics.median(deltas):+5.2f} ms" if deltas else ""
    print(f"  {first['command']:<40} {statistics.median(times):6.1f} ms  "
          f"{statistics.median(ratios):4.2f}x ({min(ratios):.2f}-{max(ratios):.2f}){extra}")
PYEOF
echo "in turns, one run each per round (benchmarks/interleaved.py):"
cmds=()
for at in "${!names[@]}"; do cmds+=("${envs[$at]} $HOOK hook claude"); done
"$PY" benchmarks/interleaved.py --python "$PY" --stdin "$state/one.json" --runs $((ROUNDS * BURST)) \
  --env "PATH=/usr/bin:/bin" -- "${cmds[@]}" >"$state/turns.jsonl"
"$PY" - "$state/turns.jsonl" "python -c pass" "${names[@]}" <<'PYEOF'
import json, sys
for name, line in zip(sys.argv[2:], open(sys.argv[1])):
    row = json.loads(line)
    print(f"  {name:<40} median {row['median_ms']:6.1f} ms (q1 {row['q1_ms']}, q3 {row['q3_ms']})"
          f"  {row['ratio_median']:4.2f}x")
PYEOF
echo "the append alone, in-process (µs per record; fresh: nothing remembered, as in a cold hook):"
for tree in "$state/before" "$ROOT"; do  # run from $state: the script's folder must not shadow PYTHONPATH
  (cd "$state" && PYTHONPATH=$tree "$PY" - "$state/inproc-$(basename "$tree")" <<'PYEOF'
import os, sys, time
from rtk_policy.audit import log as audit, store
from rtk_policy.config.load import Config
from rtk_policy.decision import Decision
os.makedirs(sys.argv[1], exist_ok=True)
config = Config(audit_path=os.path.join(sys.argv[1], "audit.jsonl"))
decision = Decision(verdict="allow", command="git status", rewrite="rtk git status",
                    rewritten="rtk git status", reasons=(), rule_ids=("git-read",), warnings=(),
                    audit_rule_ids=(), gate="")
label = "anchor" if hasattr(store, "adopt") else "chain only"
for remember in (False, True):
    times = []
    for n in range(3000):
        if not remember:
            store._written.clear()  # as a fresh hook process: the anchor (or the tail) is read
        started = time.perf_counter_ns()
        audit.record(config, agent="claude", request={"command": "git status"}, decision=decision)
        times.append((time.perf_counter_ns() - started) / 1000)
    times = sorted(times[300:])
    print(f"  {label:<10} {'remembered' if remember else 'fresh':<10} median "
          f"{times[len(times) // 2]:6.1f} µs, q1 {times[len(times) // 4]:6.1f} µs")
PYEOF
  )
done
