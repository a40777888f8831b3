"""The shell stage imports its tree walker only for inputs that need it (`assemble.Walker`,
`util/lazy_import.py`): a cold hook deciding one plain command loads none of the walker's parts,
and every input parses as the eagerly imported walker parses it."""

from __future__ import annotations

import json
import subprocess
import sys

from rtk_policy.shell import assemble, parse
from rtk_policy.shell.parser import Walker
from rtk_policy.util.lazy_import import lazy_function

#: the modules only the tree walk (and the stage's passes after it) needs
WALK_ONLY = (
    "rtk_policy.shell.parser", "rtk_policy.shell.compound", "rtk_policy.shell.pipes",
    "rtk_policy.shell.values_walk", "rtk_policy.shell.functions", "rtk_policy.shell.aliases",
    "rtk_policy.shell.treeshape", "rtk_policy.shell.expressions", "rtk_policy.shell.reserved",
)  # fmt: skip
PROBE = """
import json, sys
from rtk_policy.shell import parse
loaded = {}
for text in sys.argv[1:]:
    parse(text)
    loaded[text] = sorted(m for m in %r if m in sys.modules)
print(json.dumps(loaded))
""" % (WALK_ONLY,)


def test_a_single_plain_command_loads_no_walker_part() -> None:
    """In a fresh process: `git status` loads none of `WALK_ONLY`; `git status && ls` (walked)
    loads the walker and the parts it runs."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "git status", "rm -rf build", "git status && ls"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    loaded = json.loads(done.stdout)
    assert loaded["git status"] == [] and loaded["rm -rf build"] == []
    assert "rtk_policy.shell.parser" in loaded["git status && ls"]


def test_every_input_parses_as_the_eager_walker_parses_it() -> None:
    """The lazily imported walker is the same walker: the entry point and `assemble` with
    `parser.Walker` itself agree on single, plain, walked and broken inputs."""
    texts = ["git status", "ls && rm -rf /", "a | b; c", "bash -c 'rm -rf /'", "echo $(id)",
             "for f in *; do rm $f; done", "x='", "f() { rm -rf /; }; f"]  # fmt: skip
    for text in texts:
        assert repr(parse(text)) == repr(assemble.assemble(text, (), Walker)), text


def test_a_lazy_function_rebinds_its_name_on_first_call() -> None:
    """The stand-in imports and calls the function, then the global names the function itself."""
    namespace: dict[str, object] = {}
    namespace["dumps"] = lazy_function(namespace, "dumps", "json")
    stand_in = namespace["dumps"]
    assert stand_in([1]) == "[1]"  # type: ignore[operator]
    assert namespace["dumps"] is json.dumps
