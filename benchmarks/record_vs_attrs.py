"""What `rtk_policy.util.record` saves a cold hook against attrs: import + class building.

Finds the record classes a cold `hook claude` on `git status` loads (their fields, annotations and
defaults), then in fresh interpreters, in turns, times (a) `import attrs` and building the same
classes with `attrs.frozen`, and (b) importing `rtk_policy.util.record` and building them with
`record.frozen`. Prints the medians over `--runs` interpreters each, in milliseconds.

Usage: python benchmarks/record_vs_attrs.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

#: list the record classes a cold hook loads, as (name, [(field, annotation, default kind)])
_FIND = r"""
import io, json, sys
from rtk_policy.hook.service import answer_payload
from rtk_policy.util import record
payload = json.dumps({"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
    "tool_name": "Bash", "tool_input": {"command": "git status"}})
answer_payload(payload.encode(), "claude")
found = []
for module in list(sys.modules.values()):
    for value in list(vars(module).values()) if module else ():
        if isinstance(value, type) and "__record_fields__" in value.__dict__:
            fields = [(f.name, f.type, "none" if f.default is record.NOTHING else
                       "factory" if isinstance(f.default, record.Factory) else "value")
                      for f in record.fields(value)]
            found.append((value.__module__ + "." + value.__qualname__, fields))
print(json.dumps(sorted(dict(found).items())))
"""
#: build the classes with one library; print the milliseconds taken, import included
_BUILD = r"""
import json, sys, time
classes = json.loads(sys.argv[2])
start = time.perf_counter()
if sys.argv[1] == "attrs":
    import attrs
    frozen, factory = attrs.frozen, attrs.Factory
else:
    from rtk_policy.util import record
    frozen, factory = record.frozen, record.Factory
for name, fields in classes:
    namespace = {"__annotations__": {f: a for f, a, _ in fields}, "__module__": "bench"}
    for field, _, kind in fields:
        if kind == "factory":
            namespace[field] = factory(tuple)
        elif kind == "value":
            namespace[field] = ()
    frozen(type(name.rsplit(".", 1)[1], (), namespace))
print((time.perf_counter() - start) * 1000)
"""


def main() -> int:
    """Print the medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": home,
               "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", home + "/cache"),
               "XDG_CONFIG_HOME": home, "XDG_RUNTIME_DIR": home + "/none"}  # fmt: skip
        found = subprocess.run([sys.executable, "-c", _FIND], env=env, check=True,
                               capture_output=True, text=True, cwd=home)  # fmt: skip
        classes = json.loads(found.stdout.strip().splitlines()[-1])
        times: dict[str, list[float]] = {"attrs": [], "record": []}
        for _ in range(args.runs):
            for kind in times:
                done = subprocess.run([sys.executable, "-c", _BUILD, kind, json.dumps(classes)],
                                      env=env, check=True, capture_output=True, text=True,
                                      cwd=home)  # fmt: skip
                times[kind].append(float(done.stdout))
    fields = sum(len(f) for _, f in classes)
    print(f"{len(classes)} record classes on a cold hook's path, {fields} fields")
    for kind, values in times.items():
        median, low, high = statistics.median(values), min(values), max(values)
        print(f"{kind:7s} import + build: median {median:.2f} ms (range {low:.2f}-{high:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
