# Shared by the benchmark scripts (sourced, run from the repository root): picks the interpreter
# (argument 1, else .venv/bin/python, else /work/venv/bin/python, else python3) into PY, the --quick flag
# (argument 2) into QUICK, the hyperfine run count into RUNS, and for the process benchmarks the number
# of rounds into ROUNDS (default 10, or $ROUNDS) and the runs per round into BURST; compiles .pyc files;
# makes the scratch folder $state, removed (and its servers stopped) at exit.
ROOT=$PWD
PY=${1:-}
if [ -z "$PY" ]; then
  for candidate in "$ROOT/.venv/bin/python" /work/venv/bin/python; do
    [ -x "$candidate" ] && { PY=$candidate; break; }
  done
  PY=${PY:-$(command -v python3)}
fi
QUICK=${2:-}
RUNS=30; [ "$QUICK" = "--quick" ] && RUNS=10
ROUNDS=${ROUNDS:-10}; BURST=5; [ "$QUICK" = "--quick" ] && { ROUNDS=3; BURST=3; }

# .pyc files first: the machine may export PYTHONDONTWRITEBYTECODE, and every run would recompile
"$PY" -m compileall -q "$ROOT/rtk_policy" >/dev/null
"$PY" -c 'import compileall, sys, sysconfig; compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=1)' \
  >/dev/null 2>&1 || true

# private HOME/XDG trees live under $state; any resident server started there is stopped at exit
state=$(mktemp -d)
cleanup() {
  for lock in "$state"/*/run/rtk-policy/engine.lock; do
    [ -f "$lock" ] && kill "$(cat "$lock")" 2>/dev/null || true
  done
  rm -rf "$state"
}
trap cleanup EXIT

# a stand-in `rtk` on the PATH of every timed process: with `rewrite = "auto"` the hook renders a
# rewrite only when RTK is there (engine/rtk_probe.py), and the path users time is the one that does
mkdir -p "$state/bin"
printf '#!/bin/sh\necho "rtk 0.31.2"\n' >"$state/bin/rtk"
chmod +x "$state/bin/rtk"
BENCH_PATH="$state/bin:/usr/bin:/bin"
