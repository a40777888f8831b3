#!/usr/bin/env bash
# Whole-process benchmarks of the hot paths against bare `python -c pass`, measured in the same hyperfine run.
# Usage: benchmarks/run.sh [PYTHON]   (default: .venv/bin/python, else the python3 on PATH)
# Writes benchmarks/results-<backend>.json and prints the medians with their ratio to bare Python.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-$( [ -x .venv/bin/python ] && echo "$PWD/.venv/bin/python" || command -v python3 )}
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }
payload=$(mktemp); trap 'rm -f "$payload"' EXIT
printf '%s' '{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"status"}}' >"$payload"
state=$(mktemp -d); trap 'rm -rf "$payload" "$state"' EXIT
for backend in cel-expr cel-python; do
  cfg="$state/$backend"; mkdir -p "$cfg/rtk-policy"
  printf 'backend = "%s"\n' "$backend" >"$cfg/rtk-policy/config.toml"
  envs="env -i HOME=$state XDG_CONFIG_HOME=$cfg XDG_STATE_HOME=$state XDG_CACHE_HOME=$state/cache PATH=/usr/bin:/bin"
  $envs "$PY" -m rtk_policy rewrite "git status" >/dev/null || true   # warm the compiled-policy cache
  hyperfine --shell=none --warmup 3 --min-runs 20 --export-json "benchmarks/results-$backend.json" \
    -n "python -c pass" "$envs $PY -c pass" \
    -n "rewrite git status ($backend)" "$envs $PY -m rtk_policy rewrite 'git status'" \
    -n "hook claude ($backend)" --input "$payload" "$envs $PY -m rtk_policy hook claude" >/dev/null
  "$PY" - "benchmarks/results-$backend.json" <<'PYEOF'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base = results[0]["median"]
for r in results:
    print(f"{r['command']:<40} median {r['median']*1000:7.1f} ms   {r['median']/base:5.2f}x bare python")
PYEOF
done
