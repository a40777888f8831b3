"""The CEL variables a policy sees: their static schema, and the values built from shell/policy
models.

The schema is derived from the record fields of `Segment`, `Redirect`, `CommandLine` and `Context`,
so a field the shell stage adds later appears in CEL automatically. The schema feeds both the CEL
type declarations of the backends and the static field checker (`checker.py`).
"""

from __future__ import annotations

import operator

from rtk_policy.policy.model import Context, ToolCall
from rtk_policy.shell.model import CommandLine, Redirect, Segment
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Schema nodes: ("string",), ("int",), ("bool",), ("dyn",), ("list", elem), ("map", value_schema)
#: for maps with any string key, and ("record", {field: schema}) for maps with a fixed set of
#: fields.
STRING, INT, BOOL, DYN = ("string",), ("int",), ("bool",), ("dyn",)
STRING_LIST = ("list", STRING)
STRING_MAP = ("map", STRING)

_TYPE_NAMES = {
    "str": STRING,
    "int": INT,
    "bool": BOOL,
    "tuple[str, ...]": STRING_LIST,
    "tuple[tuple[str, str], ...]": STRING_MAP,
    "tuple[tuple[str, object], ...]": ("map", DYN),
}
_PIPELINE_FIELDS = {
    "pipeline_index": "index",
    "pipeline_size": "size",
    "pipeline_before": "before",
    "pipeline_after": "after",
    "pipe_stderr": "stderr",
}


def _record_of(cls: type, extra: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    fields = {f.name: _TYPE_NAMES.get(str(f.type), DYN) for f in record.fields(cls)}
    fields.update(extra or {})
    return ("record", fields)


REDIRECT = _record_of(Redirect)
_SEGMENT_BASE = _record_of(Segment, {"redirects": ("list", REDIRECT)})[1]
PIPELINE = (
    "record",
    {short: _SEGMENT_BASE[name] for name, short in _PIPELINE_FIELDS.items()},
)
SEGMENT = (
    "record",
    {
        **{k: v for k, v in _SEGMENT_BASE.items() if k not in _PIPELINE_FIELDS},
        "pipeline": PIPELINE,
    },
)
COMMAND = _record_of(CommandLine, {"segments": ("list", SEGMENT), "segment_count": INT})
_CONTEXT_FIELDS = ("agent", "cwd", "project_dir", "permission_mode", "session_id", "tool_name")
CTX = (
    "record",
    {**{k: STRING for k in _CONTEXT_FIELDS}, "tool_input": ("map", DYN), "env": STRING_MAP},
)
CLAUDE = ("record", {"deny": STRING_LIST, "ask": STRING_LIST, "allow": STRING_LIST})
#: the tool call: a file tool's own, or for a shell command the segment's (kind "shell", the paths
#: the segment writes: `shell_paths.py`); paths are spellings (`paths.spellings`), trees end in "/"
TOOL = (
    "record",
    {
        "name": STRING,
        "kind": STRING,
        "paths_written": STRING_LIST,
        "paths_read": STRING_LIST,
        "paths": STRING_LIST,
    },
)
CONFIG = (
    "record",
    {
        "exclude_commands": STRING_LIST,
        "transparent_prefixes": STRING_LIST,
        "disabled_rules": STRING_LIST,
        "enabled_packs": STRING_LIST,
    },
)

#: Every CEL variable and its schema.
VARIABLES: dict[str, Any] = {
    "segment": SEGMENT,
    "command": COMMAND,
    "ctx": CTX,
    "claude": CLAUDE,
    "config": CONFIG,
    "tool": TOOL,
}

_SEGMENT_NAMES = tuple(f.name for f in record.fields(Segment))
_SEGMENT_SET = frozenset(_SEGMENT_NAMES) - frozenset(_PIPELINE_FIELDS)
_COMMAND_NAMES = tuple(f.name for f in record.fields(CommandLine) if f.name != "segments")
_read_command = operator.attrgetter(*_COMMAND_NAMES)


def schema_signature() -> str:
    """A stable text of the whole schema (part of the compiled-cache key)."""
    return repr(sorted((name, repr(schema)) for name, schema in VARIABLES.items()))


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def redirect_value(redirect: Redirect) -> dict[str, Any]:
    """The CEL map of one redirect."""
    return {
        "op": redirect.op,
        "fd": redirect.fd,
        "target": redirect.target,
        "is_file": redirect.is_file,
    }


def _segment_field(segment: Segment, name: str) -> Any:
    value = getattr(segment, name)
    if type(value) is not tuple:
        return value
    return _CONVERTERS.get(name, list)(value)


def _redirect_values(redirects: tuple[Redirect, ...]) -> list[dict[str, Any]]:
    return [redirect_value(r) for r in redirects]


#: how a tuple field becomes its CEL value (any other tuple field: a list)
_CONVERTERS: dict[str, Any] = {"env": dict, "redirects": _redirect_values}
_TOP_NAMES = tuple(name for name in _SEGMENT_NAMES if name not in _PIPELINE_FIELDS)
_PIPELINE_NAMES = tuple(_PIPELINE_FIELDS)
_PIPELINE_KEYS = tuple(_PIPELINE_FIELDS.values())
#: the fields declared as tuples, each with its converter: (name or pipeline key, converter)
_TUPLE_FIELDS = {
    f.name: _CONVERTERS.get(f.name, list)
    for f in record.fields(Segment)
    if str(f.type).startswith("tuple[")
}
_TOP_TUPLES = tuple((n, c) for n, c in _TUPLE_FIELDS.items() if n in _TOP_NAMES)
_PIPELINE_TUPLES = tuple(
    (_PIPELINE_FIELDS[n], c) for n, c in _TUPLE_FIELDS.items() if n in _PIPELINE_FIELDS
)
_read_top = operator.attrgetter(*_TOP_NAMES)
_read_pipeline = operator.attrgetter(*_PIPELINE_NAMES)


#: segments mapped whole by `_whole_segment` before `_built_segment` is generated (never a cold
#: hook: compiling it costs about as much as 100 segments)
BUILD_AFTER = 512
_until_built = BUILD_AFTER


def segment_value(segment: Segment, fields: frozenset[str] | None = None) -> dict[str, Any]:
    """The CEL `segment` map of one segment (plain dicts, lists, str, int, bool).

    `fields` limits the map to the fields the loaded expressions read (None: every field).
    """
    global _until_built, _build_whole
    if fields is not None:
        data = {name: _segment_field(segment, name) for name in fields if name in _SEGMENT_SET}
        if "pipeline" in fields:
            data["pipeline"] = {
                short: _segment_field(segment, name) for name, short in _PIPELINE_FIELDS.items()
            }
        return data
    if _until_built > 0:
        _until_built -= 1
        if _until_built == 0:
            _build_whole = _built_segment() or _whole_segment
    return _build_whole(segment)


def _whole_segment(segment: Segment) -> dict[str, Any]:
    """`segment_value(segment)` of every field, by the tables of field names."""
    data = dict(zip(_TOP_NAMES, _read_top(segment), strict=True))
    for name, convert in _TOP_TUPLES:
        value = data[name]
        if type(value) is tuple:
            data[name] = convert(value)
    pipeline = dict(zip(_PIPELINE_KEYS, _read_pipeline(segment), strict=True))
    for key, convert in _PIPELINE_TUPLES:
        value = pipeline[key]
        if type(value) is tuple:
            pipeline[key] = convert(value)
    data["pipeline"] = pipeline
    return data


_build_whole = _whole_segment


def _built_segment() -> Any:
    """A generated `_whole_segment`: one dict display reading each field once, a tuple field
    converted as `_whole_segment` converts it; None when it cannot be compiled."""
    constants: dict[str, Any] = {}

    def read(name: str) -> str:
        convert = _TUPLE_FIELDS.get(name)
        if convert is None:
            return f"s.{name}"
        constants[f"_c_{name}"] = convert
        return f"(_c_{name}(v) if type(v := s.{name}) is tuple else v)"

    top = ", ".join(f"{name!r}: {read(name)}" for name in _TOP_NAMES)
    pipeline = ", ".join(f"{short!r}: {read(name)}" for name, short in _PIPELINE_FIELDS.items())
    source = f"def build(s):\n    return {{{top}, 'pipeline': {{{pipeline}}}}}\n"
    try:
        code = compile(source, "<segment_value>", "exec")
    except (SyntaxError, ValueError, MemoryError):  # a field name Python cannot spell
        return None
    exec(code, constants)  # noqa: S102 - our own source, from the record's field names
    return constants["build"]


def command_value(command_line: CommandLine, segments: list[Any] | None) -> dict[str, Any]:
    """The CEL `command` map; `segments` are the already built segment maps (None: leave them out,
    when no expression reads `command.segments`)."""
    data = dict(zip(_COMMAND_NAMES, _read_command(command_line), strict=True))
    if segments is not None:
        data["segments"] = segments
    data["segment_count"] = len(command_line.segments)
    return data


def context_values(context: Context) -> dict[str, dict[str, Any]]:
    """The CEL `ctx`, `claude` and `config` maps of a context."""
    ctx = {name: getattr(context, name) for name in _CONTEXT_FIELDS}
    ctx["tool_input"] = {str(k): _plain(v) for k, v in context.tool_input}
    ctx["env"] = {k: v for k, v in context.env}
    return {
        "ctx": ctx,
        "claude": {
            "deny": list(context.claude_deny),
            "ask": list(context.claude_ask),
            "allow": list(context.claude_allow),
        },
        "config": {
            "exclude_commands": list(context.exclude_commands),
            "transparent_prefixes": list(context.transparent_prefixes),
            "disabled_rules": list(context.disabled_rules),
            "enabled_packs": list(context.enabled_packs),
        },
    }


def tool_value(
    name: str, kind: str, written: tuple[str, ...], read: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The CEL `tool` map: `written` and `read` are spellings already (`paths.spellings`)."""
    return {
        "name": name,
        "kind": kind,
        "paths_written": list(written),
        "paths_read": list(read),
        "paths": list(dict.fromkeys((*written, *read))),
    }


def tool_call_value(call: ToolCall, cwd: str) -> dict[str, Any]:
    """The CEL `tool` map of a tool call that is not a shell command: its paths, as the agent gave
    them, spelt out against `cwd`."""
    from rtk_policy.policy.paths import spellings

    def spelt(items: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(form for item in items if item for form in spellings(item, cwd)))

    return tool_value(call.name, call.kind, spelt(call.paths_written), spelt(call.paths_read))
