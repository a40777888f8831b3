"""The compiled-policy cache as the agent would attack it: it writes the cache folder as the hook's
own user. A file that would run code under pickle never runs, a damaged or edited file is rebuilt
and decides as a fresh compile does, and even a forgery that recomputes the digest cannot make the
hook run code (it can only say what an edited policy could say: see the threat-model notes)."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from hashlib import blake2b
from pathlib import Path

import pytest

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import cache
from rtk_policy.policy.load import packs_dir

#: the shipped packs as the hook finds them (site-packages for an installed wheel, policies/ in a
#: checkout): the hook under test reads the cache file of exactly these
PACKS = packs_dir()
#: commands and what a fresh compile of the packs answers for them (checked in `pristine`)
COMMANDS = {
    "rm -rf /": "deny",
    "sudo rm -rf / --no-preserve-root": "deny",
    "git push --force origin main": "deny",
    "git status": "allow",  # Claude Code's read-only set (claude-read-only)
    "ls -la | grep x": "allow",
}
MAGIC = b"rtk-policy-cache 3\n"


class RunsCode:
    """A pickle payload that runs a shell command when unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A cache folder holding the packs compiled once (each test copies it)."""
    home = tmp_path_factory.mktemp("pristine-cache")
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home)
    try:
        engine = load_engine([PACKS])
        assert _verdicts(engine) == COMMANDS
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = previous
    return home / "rtk-policy"


@pytest.fixture()
def cache_file(pristine, tmp_path, monkeypatch) -> Path:
    """This test's own copy of the compiled packs; XDG_CACHE_HOME points at it."""
    shutil.copytree(pristine, tmp_path / "cache" / "rtk-policy")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (found,) = (tmp_path / "cache" / "rtk-policy").glob("policies-*.cache")
    return found


def _verdicts(engine) -> dict[str, str]:
    context = engine.context(agent="claude")
    return {command: engine.decide(command, context).verdict for command in COMMANDS}


def _key(path: Path) -> str:
    return path.name[len("policies-") : -len(".cache")]


def _split(path: Path) -> tuple[dict, bytes]:
    """(the JSON wrapper, the blob bytes) of a cache file, read as an attacker would."""
    data = path.read_bytes()
    header, _, rest = data[len(MAGIC) :].partition(b"\n")
    length = int(header.split(b" ")[1])
    return json.loads(rest[:length]), rest[length:]


def _forge(path: Path, wrapper: dict, blobs: bytes, keep_digest: bool = False) -> bytes:
    """Write a cache file holding `wrapper` and `blobs`: with the digest recomputed (an attacker
    who knows the format), or with the old file's digest (`keep_digest`: an edit by hand)."""
    text = json.dumps(wrapper, separators=(",", ":")).encode()
    body = text + blobs
    if keep_digest:
        digest = path.read_bytes()[len(MAGIC) :].split(b" ", 1)[0]
    else:
        digest = blake2b(body, digest_size=32, key=_key(path).encode()[:64]).hexdigest().encode()
    data = MAGIC + digest + b" %d\n" % len(text) + body
    path.write_bytes(data)
    return data


def _rebuilt(path: Path, forged: bytes) -> bool:
    """Whether the cache file was written again and now verifies."""
    return path.read_bytes() != forged and cache.read_cache(_key(path)) is not None


def _hook(command: str) -> tuple[str, str]:
    """The real hook (`python -m rtk_policy hook claude`) on `command`: (stdout, stderr)."""
    payload = {"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command}}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "rtk_policy", "hook", "claude"],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=120,
                          cwd="/tmp")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.decode(), done.stderr.decode()


def _hook_verdict(out: str) -> str:
    if not out.strip():
        return "none"
    answer = json.loads(out)["hookSpecificOutput"]
    return answer.get("permissionDecision", "none")


@pytest.mark.parametrize("form", ["bare pickle", "pickle behind a valid header", "old .pickle"])
def test_a_pickle_in_the_cache_never_runs(cache_file, tmp_path, form):
    """A pickle whose loading runs `touch MARKER`, written where the hook reads its cache (or
    where an older version read it, with that version's header and CRC): the hook never runs it,
    denies `rm -rf /` and rebuilds the cache."""
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"rules": RunsCode(marker)})
    if form == "bare pickle":
        cache_file.write_bytes(payload)
    elif form == "pickle behind a valid header":
        digest = blake2b(payload, digest_size=32, key=_key(cache_file).encode()[:64])
        cache_file.write_bytes(MAGIC + digest.hexdigest().encode() + b" 0\n" + payload)
    else:
        from binascii import crc32

        old = cache_file.with_suffix(".pickle")
        old.write_bytes(b"rtk-policy-cache 2\n" + b"%08x" % crc32(payload) + payload)
        cache_file.write_bytes(payload)
    forged = cache_file.read_bytes()
    for command in ("rm -rf /", "git status"):
        out, _ = _hook(command)
        assert _hook_verdict(out) == COMMANDS[command]
    assert not marker.exists()
    assert _rebuilt(cache_file, forged)


@pytest.mark.parametrize("damage", ["truncated", "garbled", "emptied", "header only"])
def test_a_damaged_cache_is_rebuilt_and_decides_the_same(cache_file, damage):
    data = cache_file.read_bytes()
    if damage == "truncated":
        forged = data[: len(data) // 2]
    elif damage == "garbled":
        middle = len(data) // 2
        forged = data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[
            middle + 64 :
        ]
    elif damage == "emptied":
        forged = b""
    else:
        forged = data[: data.index(b"\n", len(MAGIC)) + 1]
    cache_file.write_bytes(forged)
    assert cache.read_cache(_key(cache_file)) is None
    assert _verdicts(load_engine([PACKS])) == COMMANDS
    assert _rebuilt(cache_file, forged)


def _deny_rule(wrapper: dict, rule_id: str) -> list:
    (found,) = [r for r in wrapper["data"]["rules"] if r[0][0] == rule_id]
    return found


@pytest.mark.parametrize("edit", ["decision", "guard", "plan"])
def test_altered_rule_data_is_detected_by_the_digest(cache_file, edit):
    """A cache of the right shape whose deny rule was switched off (its decision made allow, its
    guard made `false`, or its step dropped from the plans), the old digest kept: it does not
    verify, is rebuilt, and `rm -rf /` is denied."""
    wrapper, blobs = _split(cache_file)
    data = wrapper["data"]
    rule = _deny_rule(wrapper, "rm-recursive-root")
    if edit == "decision":
        rule[0][5] = "allow"
    elif edit == "guard":
        data["forms"].append(["lit", False])
        rule[6] = len(data["forms"]) - 1
    else:
        index = data["rules"].index(rule)
        steps = [int(n) for n in data["plans"][0]["rm"].split(",")]
        kept = [n for i, n in enumerate(steps) if steps[i - i % 2] != index]
        data["plans"][0]["rm"] = ",".join(map(str, kept))
    forged = _forge(cache_file, wrapper, blobs, keep_digest=True)
    assert cache.read_cache(_key(cache_file)) is None
    assert _verdicts(load_engine([PACKS])) == COMMANDS
    assert _rebuilt(cache_file, forged)


def _nodes(data: dict, kind: str) -> list[list]:
    return [node for node in data["forms"] if node[0] == kind]


_SHAPES = {
    "rule file out of range": lambda d: d["rules"][0].__setitem__(1, 999),
    "match program out of range": lambda d: d["rules"][0].__setitem__(2, 10**6),
    "rewrite rule without a rewrite": lambda d: [
        r.__setitem__(4, -1) for r in d["rules"] if r[0][4] == "rewrite"
    ],
    "unknown verdict": lambda d: d["rules"][0][0].__setitem__(5, "yes"),
    "bool where an int is": lambda d: d["rules"][0].__setitem__(1, True),
    "node of an unknown kind": lambda d: d["forms"].__setitem__(0, ["exec", "print(1)"]),
    "node referring forward": lambda d: _nodes(d, "dot")[0].__setitem__(1, len(d["forms"])),
    "node referring to itself": lambda d: _nodes(d, "not")[0].__setitem__(
        1, d["forms"].index(_nodes(d, "not")[0])
    ),
    "literal of another type": lambda d: _nodes(d, "lit")[0].__setitem__(1, [1, 2]),
    "relation not one": lambda d: _nodes(d, "rel")[0].__setitem__(1, "__import__"),
    "plan not a text": lambda d: d["plans"][0].__setitem__("rm", [0, -1]),
    "result type not one": lambda d: d["expected"].__setitem__(0, "python"),
    "a list where the set is": lambda d: d.clear(),
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_a_forgery_of_the_wrong_shape_is_rebuilt(cache_file, shape):
    """A forgery with a recomputed digest whose content is not what the compiler makes: it is
    refused as a whole and compiled again, before anything in it reaches the evaluator."""
    wrapper, blobs = _split(cache_file)
    _SHAPES[shape](wrapper["data"])
    forged = _forge(cache_file, wrapper, blobs)
    assert cache.read_cache(_key(cache_file)) is not None  # the digest verifies
    assert _verdicts(load_engine([PACKS])) == COMMANDS
    assert _rebuilt(cache_file, forged)


def test_blob_lengths_that_do_not_add_up_are_refused(cache_file):
    wrapper, blobs = _split(cache_file)
    wrapper["blobs"][0] += 1
    forged = _forge(cache_file, wrapper, blobs)
    assert cache.read_cache(_key(cache_file)) is None
    assert _verdicts(load_engine([PACKS])) == COMMANDS
    assert _rebuilt(cache_file, forged)


_CODE = "'); __import__('os').system('touch {marker}'); ('"


@pytest.mark.parametrize("backend", ["cel-expr", "cel-python"])
def test_a_forgery_with_a_valid_digest_cannot_run_code(pristine, tmp_path, monkeypatch, backend):
    """The worst forgery: the digest recomputed, the shape valid, every name and string of the
    guard forms (which warm processes turn into generated Python, `guards/code.py`) and every
    compiled program replaced by Python that would touch a marker. Nothing runs, however many
    commands the engine decides (enough to compile the guards), on either backend."""
    from rtk_policy.policy.guards import plans

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(plans, "COMPILE_AFTER", 2)
    load_engine([PACKS], backend=backend)  # this backend's set, compiled
    (path,) = (tmp_path / "cache" / "rtk-policy").glob("policies-*.cache")
    marker = tmp_path / "pwned"
    code = _CODE.format(marker=marker)
    wrapper, _ = _split(path)
    for node in wrapper["data"]["forms"]:
        if node[0] in ("ident", "lit") and type(node[1]) is str:
            node[1] = code + node[1]
        elif node[0] in ("dot",):
            node[2] = code + node[2]
        elif node[0] in ("call", "mcall"):
            node[1] = code + node[1]
        elif node[0] in ("exists", "all"):
            node[2] = code
    python = f"__import__('os').system('touch {marker}')".encode()
    wrapper["blobs"] = [len(python)] * len(wrapper["blobs"])
    _forge(path, wrapper, python * len(wrapper["blobs"]))
    engine = load_engine([PACKS], backend=backend)
    assert engine.policies._planner._tables is not None  # the forgery was loaded, not rebuilt
    context = engine.context(agent="claude")
    for _ in range(300):  # enough for the plans' and the files' guards to be compiled
        for command in COMMANDS:
            engine.decide(command, context)
    compiled = engine.policies._planner._compiler
    assert compiled is not None and any(
        getattr(guard, "__name__", "") == "guard" for guard in compiled._made.values()
    )  # generated Python was made from the forged forms
    assert not marker.exists()


_STRENGTH = {"deny": 3, "ask": 2, "allow": 1, "none": 0}


@pytest.mark.parametrize("backend", ["cel-expr", "cel-python"])
def test_programs_that_do_not_restore_fail_closed(pristine, tmp_path, monkeypatch, backend):
    """Compiled programs replaced by bytes that do not restore (the digest recomputed, so the set
    loads): every rule that needs its program fails closed, no decision is weaker than a fresh
    compile's and nothing raises."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fresh = _verdicts(load_engine([PACKS], backend=backend))
    (path,) = (tmp_path / "cache" / "rtk-policy").glob("policies-*.cache")
    wrapper, _ = _split(path)
    junk = b"\xff\xfe not a program"
    wrapper["blobs"] = [len(junk)] * len(wrapper["blobs"])
    _forge(path, wrapper, junk * len(wrapper["blobs"]))
    engine = load_engine([PACKS], backend=backend)
    assert engine.policies._planner._tables is not None  # the forgery was loaded
    forged = _verdicts(engine)
    assert all(_STRENGTH[forged[c]] >= _STRENGTH[fresh[c]] for c in COMMANDS), forged
    assert forged["rm -rf /"] == "deny"


@pytest.mark.parametrize("text", ["x", "0,-1,", "1000000,-1", "0,1000000", "0,-2", "0", "0,-1,5"])
def test_a_stored_plan_that_does_not_check_is_not_used(cache_file, text):
    """A program's stored plan is text, checked when the program is first planned: one that does
    not name (rule, residual) pairs kept is ignored and the plan worked out from the rules' guards,
    so the decisions are a fresh compile's."""
    wrapper, blobs = _split(cache_file)
    data = wrapper["data"]
    if text == "0,-1,5":
        text = data["plans"][0]["rm"] + ",5"  # one more number than pairs
    data["plans"][0]["rm"] = text
    _forge(cache_file, wrapper, blobs)
    engine = load_engine([PACKS])
    planner = engine.policies._planner
    assert planner._tables is not None  # the forgery was loaded
    assert planner._tables.pairs("rm", len(engine.policies.rules)) is None
    assert _verdicts(engine) == COMMANDS


def _reachable(nodes: list, start: int) -> set[int]:
    """The node indexes a stored form refers to, itself included (every int of a node but a
    literal's value is a reference)."""
    seen, stack = set(), [start]
    while stack:
        at = stack.pop()
        if at >= 0 and at not in seen:
            seen.add(at)
            if nodes[at][0] != "lit":
                for part in nodes[at][1:]:
                    stack.extend(ref for ref in (part if type(part) is list else [part])
                                 if type(ref) is int)  # fmt: skip
    return seen


@pytest.mark.parametrize("node", [["exec", "print(1)"], ["lit", [1, 2]], ["not", 10**6], "x"])
def test_a_forged_rule_form_is_no_pre_check(cache_file, node):
    """A forgery with a recomputed digest whose node, read by a rule's guard only (not by a
    file's, which the set reads as it loads), is not one the compiler makes: the set loads, and
    that node never reaches the guard layer. The rules that refer to it are decided by CEL alone
    (their guard is one that cannot tell), so every decision is a fresh compile's."""
    wrapper, blobs = _split(cache_file)
    data = wrapper["data"]
    nodes = data["forms"]
    on_files = set().union(*(_reachable(nodes, ref) for f in data["files"] for ref in f[5:7]))
    rule = next(r for r in data["rules"] if r[0][0] == "rm-recursive-root")
    target = max(_reachable(nodes, rule[6]) - on_files)
    nodes[target] = node
    forged = _forge(cache_file, wrapper, blobs)
    engine = load_engine([PACKS])
    stored = engine.policies.compiled_rules
    assert type(stored).__name__ == "StoredRules"  # the forgery was loaded, not rebuilt
    assert _verdicts(engine) == COMMANDS
    index = next(i for i, r in enumerate(engine.policies.rules) if r.id == "rm-recursive-root")
    assert stored[index].guard == ("unknown",)
    assert cache_file.read_bytes() == forged
    out, _ = _hook("rm -rf /")
    assert _hook_verdict(out) == "deny"
