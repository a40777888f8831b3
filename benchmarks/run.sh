#!/usr/bin/env bash
# Whole-process benchmarks of the hook paths against bare `python -c pass`, measured in the same hyperfine
# run, for both CEL backends; then the http hook under load, serve memory and engine throughput.
# Usage: [PARTS="processes http throughput memory"] [BACKENDS="cel-expr cel-python"] [ROUNDS=10] benchmarks/run.sh [PYTHON] [--quick]   (default PYTHON: .venv/bin/python, else /work/venv/bin/python,
# else python3). Every process runs under `env -i` with a private HOME/XDG tree; compiled .pyc files are
# written first (compileall) so that PYTHONDONTWRITEBYTECODE cannot make every run recompile.
# Writes benchmarks/results-<backend>.json (hyperfine) and benchmarks/results-extra.jsonl.
# The "floor" rows time imports alone: `import json` (the hook protocol needs it, and with it re and
# enum) and `import json, attrs` (what every decision paid while the stage models were attrs classes;
# they are `rtk_policy.util.record` classes now and a cold hook imports no attrs).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/common.sh
. benchmarks/common.sh
PARTS=${PARTS:-processes http throughput memory}
BACKENDS=${BACKENDS:-cel-expr cel-python}
want() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }

CLIENT=$("$PY" -c 'import rtk_policy.serve.client as c, os; print(os.path.realpath(c.__file__))')
# the in-process hook as `init --in-process` installs it (`<python> -P <abs>/rtk_policy/__main__.py`),
# its guard left out
HOOK=$("$PY" -P -c 'import shlex; from rtk_policy.settings.hook_command import unguarded
from rtk_policy.settings.targets import hook_command; print(shlex.join(unguarded(hook_command("claude"))[:-2]))')


payload() {  # payload FILE COMMAND
  "$PY" -c 'import json, sys; print(json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl",
    "cwd": "/tmp", "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
    "tool_input": {"command": sys.argv[1], "description": "bench"}}))' "$2" >"$1"
}
ONE="git status"
TEN="git status && git log -5 && ls -la && cargo build && cargo test && npm test && git diff && grep -rn foo src && pytest -q && tsc --noEmit"
payload "$state/one.json" "$ONE"
payload "$state/ten.json" "$TEN"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "python: $("$PY" -VV | head -1); date: $(date -u +%Y-%m-%dT%H:%MZ)"

for backend in $BACKENDS; do
  want processes || continue
  home="$state/$backend"; mkdir -p "$home/config/rtk-policy" "$home/run"
  # rewrite_unapproved: the timed hook is not under a Claude Code process whose command line it
  # could read (engine/gating.py, question 4), and the path timed is the one that hands a rewrite over
  printf 'backend = "%s"\nrewrite_unapproved = true\n' "$backend" >"$home/config/rtk-policy/config.toml"
  envs="env -i HOME=$home XDG_CONFIG_HOME=$home/config XDG_STATE_HOME=$home/state XDG_CACHE_HOME=$home/cache XDG_RUNTIME_DIR=$home/run PATH=$BENCH_PATH"
  cold="env -i HOME=$home XDG_CONFIG_HOME=$home/config XDG_STATE_HOME=$home/state XDG_CACHE_HOME=$home/cache XDG_RUNTIME_DIR=$home/none PATH=$BENCH_PATH"
  $envs "$PY" -m rtk_policy rewrite "git status" >/dev/null || true   # compile the policy cache
  $envs "$PY" -S -I "$CLIENT" claude <"$state/one.json" >/dev/null     # starts the server
  for _ in $(seq 1 200); do [ -S "$home/run/rtk-policy/engine.sock" ] && break; sleep 0.1; done
  sleep 1
  $envs "$PY" -S -I "$CLIENT" claude <"$state/ten.json" | grep -q "rtk git log" || echo "warning: no rewrite from the server" >&2
  # the installed client when no server answers: it starts one in the background and decides in-process;
  # before each of its runs the server the previous run started is stopped (a runtime folder of its own)
  none="env -i HOME=$home XDG_CONFIG_HOME=$home/config XDG_STATE_HOME=$home/state XDG_CACHE_HOME=$home/cache XDG_RUNTIME_DIR=$home/run2 PATH=$BENCH_PATH"
  mkdir -p "$home/run2" && chmod 700 "$home/run2"
  stop="p=\$(cat $home/run2/rtk-policy/engine.lock 2>/dev/null) && kill \$p 2>/dev/null; while [ -n \"\$p\" ] && kill -0 \$p 2>/dev/null; do sleep 0.01; done; rm -f $home/run2/rtk-policy/engine.sock; true"
  # Each row is timed in ROUNDS short hyperfine runs beside bare `python -c pass` (BURST runs of each,
  # the rows taking turns): hyperfine times one command after the other, and on a machine whose speed
  # drifts one long run compares a row with a bare start timed at another speed. A row reports its
  # median time and the median (min-max) over the rounds of its ratio to the bare start beside it.
  names=("floor: python -c 'import json'" "floor: python -c 'import json, attrs'"
    "client, server up, 1 segment ($backend)" "client, server up, 10 segments ($backend)"
    "client, no server, 1 segment ($backend)"
    "hook claude cold, 1 segment ($backend)" "hook claude cold, 10 segments ($backend)")
  prepares=(true true true true "$stop" true true)
  commands=("$envs $PY -c 'import json' <$state/one.json" "$envs $PY -c 'import json, attrs' <$state/one.json"
    "$envs $PY -S -I $CLIENT claude <$state/one.json" "$envs $PY -S -I $CLIENT claude <$state/ten.json"
    "$none $PY -S -I $CLIENT claude <$state/one.json"
    "$cold $HOOK hook claude <$state/one.json" "$cold $HOOK hook claude <$state/ten.json")
  for round in $(seq 1 "$ROUNDS"); do
    for at in "${!names[@]}"; do
      hyperfine --warmup 2 --runs "$BURST" --export-json "$state/pair.json" \
        -p true -n "python -c pass" "$envs $PY -c pass <$state/one.json" \
        -p "${prepares[$at]}" -n "${names[$at]}" "${commands[$at]}" >/dev/null 2>&1
      "$PY" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["results"]))' \
        "$state/pair.json" >>"$state/pairs-$backend.jsonl"
    done
  done
  kill "$(cat "$home/run2/rtk-policy/engine.lock" 2>/dev/null)" 2>/dev/null || true
  echo "cold hook, timed in turns with bare python, one run each per round (benchmarks/interleaved.py):"
  "$PY" benchmarks/interleaved.py --python "$PY" --stdin "$state/one.json" --runs $((ROUNDS * BURST)) \
    --env "HOME=$home" --env "XDG_CONFIG_HOME=$home/config" --env "XDG_STATE_HOME=$home/state" \
    --env "XDG_CACHE_HOME=$home/cache" --env "XDG_RUNTIME_DIR=$home/none" --env "PATH=$BENCH_PATH" \
    "$HOOK hook claude" | tee -a "$state/interleaved-$backend.jsonl"
  "$PY" - "benchmarks/results-$backend.json" "$state/pairs-$backend.jsonl" <<'PYEOF'
import json, statistics, sys
pairs = [json.loads(line) for line in open(sys.argv[2])]
json.dump({"pairs": pairs}, open(sys.argv[1], "w"), indent=1)
rows: dict[str, list] = {}
for bare, row in pairs:
    rows.setdefault(row["command"], []).append((bare["median"], row["median"]))
bare_ms = statistics.median(bare["median"] for bare, _ in pairs) * 1000
print(f"{len(pairs) // len(rows)} rounds; per row its median time and the median (min-max) over the rounds")
print(f"of its ratio to bare python timed beside it; bare python: median {bare_ms:.1f} ms")
for name, timings in rows.items():
    ratios = [row / bare for bare, row in timings]
    ms = statistics.median(row for _, row in timings) * 1000
    print(f"{name:<44} median {ms:7.1f} ms   {statistics.median(ratios):5.2f}x bare python"
          f" ({min(ratios):.2f}-{max(ratios):.2f})")
PYEOF
  kill "$(cat "$home/run/rtk-policy/engine.lock")" 2>/dev/null || true
done

extra=benchmarks/results-extra.jsonl
echo "{\"run\": \"$(date -u +%FT%TZ)\", \"parts\": \"$PARTS\", \"backends\": \"$BACKENDS\"}" >>"$extra"
REQ=4000; MEM=${RTK_BENCH_MEM_REQUESTS:-100000}; SECS=20; [ "$QUICK" = "--quick" ] && { REQ=800; MEM=5000; SECS=5; }
for backend in $BACKENDS; do
  if want http; then
    for mode in "" --unique; do
      echo "http hook, 8 clients ($backend) $mode:"
      RTK_POLICY_BACKEND=$backend XDG_STATE_HOME="$state/http-$backend" "$PY" benchmarks/http_load.py \
        --clients 8 --requests "$REQ" --seconds 120 $mode | tee -a "$extra"
    done
  fi
  if want throughput; then
    echo "engine throughput ($backend):"
    XDG_CACHE_HOME="$state/cache" timeout 600 "$PY" benchmarks/batch_throughput.py --backend "$backend" \
      --seconds "$SECS" | tee -a "$extra" || echo "(stopped after 600 s)"
  fi
done
if want memory; then
  for mode in "" --unique; do
    echo "serve memory (cel-expr) $mode:"
    XDG_CACHE_HOME="$state/cache" "$PY" benchmarks/serve_memory.py --requests "$MEM" \
      --seconds "${RTK_BENCH_MEM_SECONDS:-600}" $mode | tee -a "$extra"
  done
fi
