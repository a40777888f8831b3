"""Policy test files (`policies/<name>_test.yaml`, like `opa test`): loading them with line numbers.

```yaml
policy: claude-permissions          # optional: the pack under test
cases:
  - name: a deny rule wins over allow
    command: git status && git push --force
    claude: {deny: ["git push --force"], allow: ["git *"]}
    context: {agent: claude, cwd: /repo, permission_mode: default}   # optional
    config: {exclude_commands: [curl]}                                 # optional
    skip: "reason"                                                     # optional
    expect: {verdict: deny, message: "deny rule", rules: [claude-deny]}
```

`expect` keys are all optional: `verdict` (allow|ask|deny|none), `rewrite` (the command the host would
run, or null for "unchanged"), `message` (a substring of one reason or warning), `rules` (ids that must
match). Running the cases lives in `rtk_policy.policytest.run`.
"""

from __future__ import annotations

from pathlib import Path

import attrs

VERDICTS = ("allow", "ask", "deny", "none")
CONTEXT_FIELDS = ("agent", "cwd", "project_dir", "permission_mode", "session_id", "tool_name",
                  "tool_input", "env")
CONFIG_FIELDS = ("exclude_commands", "transparent_prefixes", "disabled_rules", "enabled_packs")
_CASE_KEYS = ("name", "command", "context", "claude", "config", "expect", "skip")
_EXPECT_KEYS = ("verdict", "rewrite", "message", "rules")
#: Marks an expectation the case does not state (distinct from `rewrite: null`).
UNSET = "<unset>"


class TestFileError(Exception):
    """A test file that cannot be read; `location` is `file:line`."""

    __test__ = False  # not a pytest class

    def __init__(self, location: str, message: str) -> None:
        super().__init__(f"{location}: {message}")
        self.location = location
        self.message = message


@attrs.frozen
class Expectation:
    """What a case expects; `UNSET` for what it does not check."""

    verdict: str = UNSET
    rewrite: str | None = UNSET
    message: str = UNSET
    rules: tuple[str, ...] = ()


@attrs.frozen
class TestCase:
    """One case of a test file."""

    __test__ = False  # not a pytest class

    name: str
    command: str
    file: str
    line: int
    policy: str = ""  #: the pack under test ("" = the whole loaded set)
    context: tuple[tuple[str, object], ...] = ()
    claude: tuple[tuple[str, tuple[str, ...]], ...] = ()
    config: tuple[tuple[str, tuple[str, ...]], ...] = ()
    expect: Expectation = Expectation()
    skip: str = ""  #: a reason to skip the case, "" to run it

    @property
    def location(self) -> str:
        """`file:line` of the case."""
        return f"{self.file}:{self.line}"


@attrs.frozen
class TestFile:
    """A parsed test file: its cases, and the problems of cases that could not be read."""

    __test__ = False

    path: str
    policy: str
    cases: tuple[TestCase, ...]
    problems: tuple[TestFileError, ...] = ()


def is_test_file(path: str | Path) -> bool:
    """True for `*_test.yaml` / `*_test.yml` files."""
    name = Path(path).name
    return name.endswith(("_test.yaml", "_test.yml"))


def load_test_file(path: str | Path) -> TestFile:
    """Parse a test file. Raise `TestFileError` when the file itself is unreadable; a bad case becomes
    one of the file's `problems`, so the other cases still run."""
    import yaml

    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except OSError as error:
        raise TestFileError(f"{name}:1", f"cannot read: {error.strerror}") from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise TestFileError(f"{name}:{line}", f"invalid YAML: {getattr(error, 'problem', error)}") from error
    if root is None:
        return TestFile(name, "", ())
    top = _mapping(root, name, "a test file must be a mapping with `cases:`")
    unknown = sorted(set(top) - {"policy", "cases", "description"})
    if unknown:
        raise TestFileError(_at(name, top[unknown[0]][0]), f"unknown key {unknown[0]!r}")
    policy = _scalar(top["policy"][1], name) if "policy" in top else ""
    if "cases" not in top:
        raise TestFileError(_at(name, root), "missing `cases:` list")
    cases_node = top["cases"][1]
    if not isinstance(cases_node, yaml.SequenceNode):
        raise TestFileError(_at(name, cases_node), "`cases:` must be a list")
    cases, problems = [], []
    for index, node in enumerate(cases_node.value):
        try:
            cases.append(_case(node, name, str(policy or ""), index))
        except TestFileError as problem:
            problems.append(problem)
    return TestFile(name, str(policy or ""), tuple(cases), tuple(problems))


def _at(file: str, node: object) -> str:
    return f"{file}:{node.start_mark.line + 1}"  # type: ignore[attr-defined]


def _mapping(node: object, file: str, message: str) -> dict[str, tuple[object, object]]:
    """A mapping node as {key: (key node, value node)}."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise TestFileError(_at(file, node), message)
    return {str(key.value): (key, value) for key, value in node.value}


def _scalar(node: object, file: str) -> object:
    """The Python value of a node (any shape), through the safe constructor."""
    import yaml

    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)  # type: ignore[arg-type]
    except yaml.YAMLError as error:
        raise TestFileError(_at(file, node), str(error)) from error
    finally:
        loader.dispose()


def _case(node: object, file: str, policy: str, index: int) -> TestCase:
    fields = _mapping(node, file, "a case must be a mapping with `command:` and `expect:`")
    location = _at(file, node)
    unknown = sorted(set(fields) - set(_CASE_KEYS))
    if unknown:
        raise TestFileError(_at(file, fields[unknown[0]][0]), f"unknown case key {unknown[0]!r}")
    data = {key: _scalar(value, file) for key, (_key, value) in fields.items()}
    command = data.get("command")
    if not isinstance(command, str) or not command:
        raise TestFileError(location, "a case needs a non-empty `command:` string")
    name = str(data.get("name") or f"case {index + 1}")
    return TestCase(
        name=name,
        command=command,
        file=file,
        line=node.start_mark.line + 1,  # type: ignore[attr-defined]
        policy=policy,
        context=_context(data.get("context"), location),
        claude=_lists(data.get("claude"), ("deny", "ask", "allow"), "claude", location),
        config=_lists(data.get("config"), CONFIG_FIELDS, "config", location),
        expect=_expectation(data.get("expect"), location),
        skip=_skip(data.get("skip"), location),
    )


def _context(value: object, location: str) -> tuple[tuple[str, object], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise TestFileError(location, "`context:` must be a mapping")
    unknown = sorted(set(value) - set(CONTEXT_FIELDS))
    if unknown:
        raise TestFileError(location, f"unknown context field {unknown[0]!r} "
                                      f"(known: {', '.join(CONTEXT_FIELDS)})")
    pairs: list[tuple[str, object]] = []
    for key, item in value.items():
        if key in ("tool_input", "env"):
            if not isinstance(item, dict):
                raise TestFileError(location, f"context.{key} must be a mapping")
            pairs.append((key, tuple((str(k), v if key == "tool_input" else str(v))
                                     for k, v in item.items())))
        else:
            pairs.append((key, "" if item is None else str(item)))
    return tuple(pairs)


def _lists(
    value: object, keys: tuple[str, ...], what: str, location: str
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise TestFileError(location, f"`{what}:` must be a mapping")
    pairs = []
    for key, item in value.items():
        if key not in keys:
            raise TestFileError(location, f"unknown {what} key {key!r} (known: {', '.join(keys)})")
        if isinstance(item, str):
            item = [item]
        if not isinstance(item, list) or not all(isinstance(v, str) for v in item):
            raise TestFileError(location, f"{what}.{key} must be a list of strings")
        pairs.append((str(key), tuple(item)))
    return tuple(pairs)


def _expectation(value: object, location: str) -> Expectation:
    if not isinstance(value, dict) or not value:
        raise TestFileError(location, "a case needs an `expect:` mapping "
                                      "(verdict, rewrite, message and/or rules)")
    unknown = sorted(set(value) - set(_EXPECT_KEYS))
    if unknown:
        raise TestFileError(location, f"unknown expect key {unknown[0]!r} "
                                      f"(known: {', '.join(_EXPECT_KEYS)})")
    verdict = value.get("verdict", UNSET)
    if verdict is None:
        verdict = "none"
    if verdict != UNSET and verdict not in VERDICTS:
        raise TestFileError(location, f"expect.verdict must be one of {', '.join(VERDICTS)}, "
                                      f"not {verdict!r}")
    rewrite = value.get("rewrite", UNSET)
    if rewrite is not None and not isinstance(rewrite, str):
        raise TestFileError(location, "expect.rewrite must be a string or null")
    message = value.get("message", UNSET)
    if not isinstance(message, str):
        raise TestFileError(location, "expect.message must be a string")
    rules = value.get("rules", [])
    if isinstance(rules, str):
        rules = [rules]
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise TestFileError(location, "expect.rules must be a list of rule ids")
    return Expectation(str(verdict), rewrite, message, tuple(rules))


def _skip(value: object, location: str) -> str:
    if value is None or value is False:
        return ""
    if value is True:
        return "skipped"
    if not isinstance(value, str):
        raise TestFileError(location, "`skip:` must be a reason string")
    return value or "skipped"
