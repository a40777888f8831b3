"""Reading policy YAML files into validated specs, collecting every problem with its position.

Load path only (imports yaml). `read_policy_file` never raises for bad content: it returns what it
could read and the problems found, so that all problems of all files are reported at once.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from rtk_policy.policy.errors import Problem
from rtk_policy.policy.model import (
    MODES,
    PIPELINE_ROLES,
    SHELL_ONLY,
    TOOL_KINDS,
    VERDICTS,
    Example,
    Rule,
)
from rtk_policy.util import record

KINDS = ("permission", "rewrite")
_ID = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_FILE_KEYS = {"name", "description", "kind", "when", "pipeline_consumer", "tools", "rules",
              "locked"}  # fmt: skip
_RULE_KEYS = {"id", "description", "decision", "rewrite", "mode", "programs", "pipeline", "match",
              "message", "tools", "examples", "locked"}  # fmt: skip
_EXAMPLE_KEYS = {"command", "tool", "path", "expect", "config", "claude", "ctx"}
#: the request fields an example may set (`ctx:`)
_EXAMPLE_CTX = {"agent", "cwd", "project_dir", "permission_mode"}
_EXPECT_PERMISSION = (*VERDICTS, "none")
_STR = "tag:yaml.org,2002:str"
_BOOL = "tag:yaml.org,2002:bool"
_REWRITE_TOOLS = "rewrites are of shell commands only: tools must be [shell] in a rewrite file"


@record.frozen
class ExprSpec:
    """A CEL expression of a policy file, with the YAML node it came from (for error positions)."""

    source: str
    expected: str  #: "bool" or "string"
    node: Any


@record.frozen
class RuleSpec:
    """A validated rule and its expressions."""

    rule: Rule
    match: ExprSpec | None
    message: ExprSpec | None
    rewrite: ExprSpec | None
    id_node: Any = None  #: the YAML node of the id (for duplicate-id positions)


@record.frozen
class FileSpec:
    """A validated policy file."""

    path: str
    text: str
    name: str
    kind: str
    when: ExprSpec | None
    pipeline_consumer: ExprSpec | None
    rules: tuple[RuleSpec, ...]


class _Reader:
    """Validation state of one file."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.lines = text.splitlines()
        self.problems: list[Problem] = []
        self.constructor = yaml.SafeLoader("")

    def problem(self, node: Any, message: str, line: int = 0, col: int = 0) -> None:
        if node is not None and not line:
            line, col = node.start_mark.line + 1, node.start_mark.column + 1
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        self.problems.append(Problem(self.path, line, col, message, source))

    def mapping(self, node: Any, what: str, known: set[str]) -> dict[str, tuple[Any, Any]]:
        """The keys of a mapping node → (key node, value node); reports unknown and duplicate
        keys."""
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{what} must be a mapping")
            return {}
        found: dict[str, tuple[Any, Any]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key not in known:
                hint = ", ".join(sorted(known))
                self.problem(key_node, f"unknown key {key!r} in {what} (known keys: {hint})")
            elif key in found:
                self.problem(key_node, f"duplicate key {key!r} in {what}")
            else:
                found[key] = (key_node, value_node)
        return found

    def string(
        self, item: tuple[Any, Any] | None, what: str, choices: tuple[str, ...] = ()
    ) -> str | None:
        if item is None:
            return None
        node = item[1]
        if not isinstance(node, yaml.ScalarNode) or (node.tag != _STR and not choices):
            self.problem(node, f"{what} must be a string")
            return None
        if choices and node.value not in choices:
            self.problem(node, f"{what} must be one of {', '.join(choices)}, not {node.value!r}")
            return None
        return str(node.value)

    def boolean(self, item: tuple[Any, Any] | None, what: str) -> bool:
        if item is None:
            return False
        node = item[1]
        if not isinstance(node, yaml.ScalarNode) or node.tag != _BOOL:
            self.problem(node, f"{what} must be true or false")
            return False
        return bool(self.value(node))

    def expr(self, item: tuple[Any, Any] | None, what: str, expected: str) -> ExprSpec | None:
        if item is None:
            return None
        node = item[1]
        if not isinstance(node, yaml.ScalarNode) or not node.value.strip():
            self.problem(node, f"{what} must be a non-empty CEL expression")
            return None
        return ExprSpec(node.value, expected, node)

    def string_list(self, item: tuple[Any, Any] | None, what: str) -> tuple[str, ...]:
        if item is None:
            return ()
        node = item[1]
        if not isinstance(node, yaml.SequenceNode) or not all(
            isinstance(n, yaml.ScalarNode) and n.tag == _STR for n in node.value
        ):
            self.problem(node, f"{what} must be a list of strings")
            return ()
        return tuple(n.value for n in node.value)

    def tools(self, item: tuple[Any, Any] | None, default: tuple[str, ...]) -> tuple[str, ...]:
        """A `tools:` selector: a list of `TOOL_KINDS` (`default` when absent or wrong)."""
        if item is None:
            return default
        kinds = self.string_list(item, "tools")
        unknown = [k for k in kinds if k not in TOOL_KINDS]
        if unknown or not kinds:
            what = f"not {unknown[0]!r}" if unknown else "not an empty list"
            self.problem(item[1], f"tools must list some of {', '.join(TOOL_KINDS)}, {what}")
            return default
        return tuple(dict.fromkeys(kinds))

    def value(self, node: Any) -> Any:
        return self.constructor.construct_object(node, deep=True)


def read_policy_file(path: str, text: str) -> tuple[FileSpec | None, list[Problem]]:
    """Parse and validate one policy file's `text`: (the spec or None, its problems)."""
    reader = _Reader(path, text)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        reader.problem(None, f"invalid YAML: {getattr(error, 'problem', None) or error}", line, col)
        return None, reader.problems
    if root is None:
        reader.problem(None, "empty policy file", 1, 1)
        return None, reader.problems
    top = reader.mapping(root, "a policy file", _FILE_KEYS)
    if not top:
        return None, reader.problems
    name = reader.string(top.get("name"), "name")
    if "name" not in top:
        reader.problem(root, "missing required key 'name'")
    kind = reader.string(top.get("kind"), "kind", KINDS) or "permission"
    when = reader.expr(top.get("when"), "when", "bool")
    consumer = reader.expr(top.get("pipeline_consumer"), "pipeline_consumer", "bool")
    if consumer is not None and kind != "rewrite":
        reader.problem(
            top["pipeline_consumer"][0], "pipeline_consumer is only allowed in rewrite files"
        )
    reader.string(top.get("description"), "description")
    tools = reader.tools(top.get("tools"), SHELL_ONLY)
    if kind == "rewrite" and tools != SHELL_ONLY:
        reader.problem(top["tools"][1], _REWRITE_TOOLS)
        tools = SHELL_ONLY
    locked = reader.boolean(top.get("locked"), "locked")
    rules = _read_rules(reader, top, root, name or "", kind, tools, locked)
    spec = FileSpec(path, text, name or "", kind, when, consumer, tuple(rules))
    return spec, reader.problems


def _read_rules(
    reader: _Reader,
    top: dict[str, Any],
    root: Any,
    policy: str,
    kind: str,
    tools: tuple[str, ...],
    locked: bool,
) -> list[RuleSpec]:
    if "rules" not in top:
        reader.problem(root, "missing required key 'rules'")
        return []
    node = top["rules"][1]
    if not isinstance(node, yaml.SequenceNode):
        reader.problem(node, "rules must be a list")
        return []
    return [
        spec
        for item in node.value
        if (spec := _read_rule(reader, item, policy, kind, tools, locked)) is not None
    ]


def _read_rule(
    reader: _Reader, node: Any, policy: str, kind: str, tools: tuple[str, ...], file_locked: bool
) -> RuleSpec | None:
    keys = reader.mapping(node, "a rule", _RULE_KEYS)
    if not isinstance(node, yaml.MappingNode):
        return None
    rule_id = reader.string(keys.get("id"), "id")
    if "id" not in keys:
        reader.problem(node, "missing required key 'id'")
    elif rule_id is not None and not _ID.match(rule_id):
        reader.problem(keys["id"][1], f"rule id {rule_id!r} must match [a-z0-9][a-z0-9-]*")
    decision = reader.string(keys.get("decision"), "decision", VERDICTS) or ""
    rewrite = reader.expr(keys.get("rewrite"), "rewrite", "string")
    if kind == "permission":
        if "decision" not in keys:
            reader.problem(node, "missing required key 'decision' (permission files)")
        if "rewrite" in keys:
            reader.problem(keys["rewrite"][0], "rewrite is only allowed in rewrite files")
        if "pipeline" in keys:
            reader.problem(keys["pipeline"][0], "pipeline is only allowed in rewrite files")
    else:
        if "rewrite" not in keys:
            reader.problem(node, "missing required key 'rewrite' (rewrite files)")
        if "decision" in keys:
            reader.problem(keys["decision"][0], "decision is only allowed in permission files")
    match = reader.expr(keys.get("match"), "match", "bool")
    if "match" not in keys:
        reader.problem(node, "missing required key 'match'")
    rule_tools = reader.tools(keys.get("tools"), tools)
    if kind == "rewrite" and rule_tools != SHELL_ONLY:
        reader.problem(keys["tools"][1], _REWRITE_TOOLS)
        rule_tools = SHELL_ONLY
    rule = Rule(
        id=rule_id or "",
        policy=policy,
        file=reader.path,
        line=node.start_mark.line + 1,
        kind=kind,
        decision=decision if kind == "permission" else "",
        mode=reader.string(keys.get("mode"), "mode", MODES) or "enforce",
        programs=reader.string_list(keys.get("programs"), "programs"),
        pipeline=reader.string(keys.get("pipeline"), "pipeline", PIPELINE_ROLES) or "never",
        description=reader.string(keys.get("description"), "description") or "",
        examples=_read_examples(reader, keys.get("examples"), kind),
        tools=rule_tools,
        locked=reader.boolean(keys.get("locked"), "locked") or file_locked,
    )
    message = reader.expr(keys.get("message"), "message", "string")
    return RuleSpec(rule, match, message, rewrite, keys["id"][1] if "id" in keys else node)


def _read_examples(reader: _Reader, item: tuple[Any, Any] | None, kind: str) -> tuple[Example, ...]:
    if item is None:
        return ()
    if not isinstance(item[1], yaml.SequenceNode):
        reader.problem(item[1], "examples must be a list")
        return ()
    examples = []
    for node in item[1].value:
        keys = reader.mapping(node, "an example", _EXAMPLE_KEYS)
        tool = reader.string(keys.get("tool"), "tool") or ""
        path = reader.string(keys.get("path"), "path") or ""
        command = reader.string(keys.get("command"), "command") if not tool else ""
        if isinstance(node, yaml.MappingNode) and (
            ("command" in keys) == ("tool" in keys) or "expect" not in keys
        ):
            needs = "an example needs 'expect' and either 'command' or 'tool' (with 'path')"
            reader.problem(node, needs)
            continue
        if command is None:
            continue
        expect = _expect(reader, keys["expect"][1], kind)
        overrides = _overrides(reader, keys)
        line = node.start_mark.line + 1
        examples.append(Example(command, expect, reader.path, line, overrides, tool, path))
    return tuple(examples)


def _expect(reader: _Reader, node: Any, kind: str) -> str | None:
    if not isinstance(node, yaml.ScalarNode):
        reader.problem(node, "expect must be a scalar")
        return None
    value = reader.value(node)
    if kind == "permission":
        if value not in _EXPECT_PERMISSION:
            reader.problem(
                node, f"expect must be one of {', '.join(_EXPECT_PERMISSION)}, not {value!r}"
            )
        return str(value)
    if value is None or value == "none":
        return None
    return str(value)


def _overrides(reader: _Reader, keys: dict[str, tuple[Any, Any]]) -> tuple[tuple[str, object], ...]:
    pairs: list[tuple[str, object]] = []
    if "claude" in keys:
        claude = reader.mapping(keys["claude"][1], "claude", {"deny", "ask", "allow"})
        pairs.append(
            ("claude", {k: list(reader.string_list(v, f"claude.{k}")) for k, v in claude.items()})
        )
    if "ctx" in keys:
        ctx = reader.mapping(keys["ctx"][1], "ctx", _EXAMPLE_CTX)
        pairs.append(("ctx", {k: str(reader.value(v[1])) for k, v in ctx.items()}))
    if "config" in keys:
        node = keys["config"][1]
        value = reader.value(node) if isinstance(node, yaml.MappingNode) else None
        if not isinstance(value, dict):
            reader.problem(node, "config must be a mapping")
        else:
            pairs.append(("config", value))
    return tuple(pairs)
