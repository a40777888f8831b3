"""Adding and removing our hook entry in an agent's settings, keeping everything else as it was."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
from typing import Any

from rtk_policy.agents import AGENTS
from rtk_policy.settings.hook_command import unguarded
from rtk_policy.settings.jsonfile import JsonFile, backup_path, read_json, render_json, save
from rtk_policy.settings.targets import Target
from rtk_policy.util import record

#: A command line that runs our hook: `…/rtk-policy hook X`, `python -m rtk_policy hook X`,
#: `python -P …/rtk_policy/__main__.py hook X`, or a delegate.
_OURS = re.compile(
    r"(?:rtk-policy|rtk_policy|rtk_policy[/\\]__main__\.py)(?:\.exe)?['\"]?\s+hook\b"
    r"|rtk_policy[/\\]hookfiles[/\\]"
    # the resident engine's thin client (init's default)
    r"|rtk_policy[/\\](?:serve[/\\])?client\.py\b"
)
THIN_CLIENT = "thin client"
IN_PROCESS = "in-process"


@record.frozen
class Change:
    """What an install or uninstall did."""

    path: str
    changed: bool
    message: str
    warnings: tuple[str, ...] = ()


def is_ours(handler: Any, command_key: str = "command") -> bool:
    """True when a hook handler runs rtk-policy."""
    if not isinstance(handler, dict):
        return False
    command = handler.get(command_key)
    return isinstance(command, str) and bool(_OURS.search(command))


def command_form(command: str) -> str | None:
    """`THIN_CLIENT` or `IN_PROCESS` when `command` is a line `init` writes (any install, any
    version, guarded or bare), None for anything else (a delegate script, or our hook with options
    the user added).

    Only these forms are replaced when `init` runs again; a customised command is left alone.
    """
    if os.name == "nt":
        try:
            words = shlex.split(command, posix=False)
        except ValueError:
            return None
    else:
        words = unguarded(command) or []
    agent_at = len(words) - 1 if words and words[-1] in AGENTS else len(words)
    head = words[:agent_at]
    if (
        len(head) == 4
        and head[1:3] == ["-S", "-I"]
        and re.search(r"rtk_policy[/\\](?:serve[/\\])?client\.py$", head[3])
    ):
        return THIN_CLIENT
    if len(head) == 2 and head[1] == "hook" and re.search(r"rtk-policy(\.exe)?$", head[0]):
        return IN_PROCESS
    if len(head) == 4 and head[1:] == ["-m", "rtk_policy", "hook"]:
        return IN_PROCESS
    if (
        len(head) == 4
        and head[1] == "-P"
        and head[3] == "hook"
        and re.search(r"rtk_policy[/\\]__main__\.py$", head[2])
    ):
        return IN_PROCESS
    return None


def shown(command: str) -> str:
    """A hook command as a person reads it: the invocation of a guarded command (its guard and
    fallback left out), any other command as it is."""
    words = unguarded(command) if os.name != "nt" and command.startswith("[") else None
    return shlex.join(words) if words else command


def matcher_covers(matcher: Any, tool: str) -> bool:
    """Whether a hook group matcher selects `tool` (Claude Code matcher rules)."""
    if matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if re.fullmatch(r"[\w\-\s,|]+", matcher):
        return tool in {part.strip() for part in re.split(r"[|,]", matcher)}
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def _handlers(group: Any) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _event_list(data: dict[str, Any], spec: Target) -> list[Any]:
    hooks = data.get("hooks")
    entries = hooks.get(spec.event) if isinstance(hooks, dict) else None
    return entries if isinstance(entries, list) else []


def _covering_groups(data: dict[str, Any], spec: Target) -> list[list[Any]]:
    """The handler lists of the event that run on our tool (the event list itself without
    matchers)."""
    entries = _event_list(data, spec)
    if spec.matcher is None:
        return [entries]
    tool = spec.covers or ""  # never None here: the group has a matcher
    return [
        _handlers(entry)
        for entry in entries
        if matcher_covers(entry.get("matcher") if isinstance(entry, dict) else None, tool)
    ]


def our_handlers(data: dict[str, Any], spec: Target) -> list[dict[str, Any]]:
    """Our handlers that run on our tool, in file order."""
    key = spec.command_key
    return [h for group in _covering_groups(data, spec) for h in group if is_ours(h, key)]


def our_commands(data: dict[str, Any], spec: Target) -> list[str]:
    """The commands of our handlers that run on our tool, in file order."""
    return [handler[spec.command_key] for handler in our_handlers(data, spec)]


def installed(data: dict[str, Any], spec: Target) -> bool:
    """Whether our entry is already in the parsed settings."""
    return bool(our_commands(data, spec))


def sibling_hooks(data: dict[str, Any], spec: Target) -> list[str]:
    """Commands of other hooks on the same tool (their rewrites race with ours)."""
    found = []
    for entry in _event_list(data, spec):
        if spec.matcher is None:
            handlers = [entry]
        elif matcher_covers(
            entry.get("matcher") if isinstance(entry, dict) else None, spec.covers or ""
        ):
            handlers = _handlers(entry)
        else:
            continue
        for handler in handlers:
            if isinstance(handler, dict) and not is_ours(handler, spec.command_key):
                found.append(str(handler.get(spec.command_key) or handler.get("url") or handler))
    return found


def set_fields(handler: dict[str, Any], spec: Target, fail_mode: str) -> None:
    """Give our `handler` the agent's timeout (unless it has one: the user's value is kept) and,
    for fail mode `closed` or `deny`, the agent's own block-on-failure setting (removed for
    `open`, when it holds the value `init` writes)."""
    if spec.timeout is not None:
        handler.setdefault(*spec.timeout)
    if spec.block_on_failure is not None:
        key, value = spec.block_on_failure
        if fail_mode in ("closed", "deny"):
            handler[key] = value
        elif handler.get(key) == value:
            del handler[key]


def our_entry(spec: Target, command: str, fail_mode: str = "open") -> dict[str, Any]:
    """The entry we add to the event list."""
    handler = dict(spec.handler_extra)
    handler[spec.command_key] = command
    set_fields(handler, spec, fail_mode)
    if spec.matcher is None:
        return handler
    return {"matcher": spec.matcher, "hooks": [handler]}


def add_entry(
    data: dict[str, Any], spec: Target, command: str, fail_mode: str = "open"
) -> dict[str, Any]:
    """A copy of `data` with our entry appended to `hooks.<event>`; raise ValueError on a wrong
    type."""
    new = copy.deepcopy(data)
    if not new:
        new.update(dict(spec.top_defaults))
    hooks = new.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError('"hooks" is not a JSON object')
    entries = hooks.setdefault(spec.event, [])
    if not isinstance(entries, list):
        raise ValueError(f'"hooks.{spec.event}" is not a JSON array')
    entries.append(our_entry(spec, command, fail_mode))
    return new


def remove_entries(data: dict[str, Any], spec: Target) -> dict[str, Any]:
    """A copy of `data` without our handlers, and without the groups and lists that only held
    them."""
    new = copy.deepcopy(data)
    hooks = new.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(spec.event), list):
        return new
    kept = []
    for entry in hooks[spec.event]:
        if spec.matcher is None:
            if not is_ours(entry, spec.command_key):
                kept.append(entry)
            continue
        handlers = _handlers(entry)
        if handlers and any(is_ours(h, spec.command_key) for h in handlers):
            rest = [h for h in handlers if not is_ours(h, spec.command_key)]
            if not rest:
                continue
            entry = {**entry, "hooks": rest}
        kept.append(entry)
    if kept:
        hooks[spec.event] = kept
    else:
        del hooks[spec.event]
        if not hooks:
            del new["hooks"]
    return new


def replace_entries(
    data: dict[str, Any], spec: Target, command: str, fail_mode: str = "open"
) -> dict[str, Any]:
    """A copy of `data` whose first standard-form handler of ours runs `command` (its place and its
    other fields kept, `set_fields` applied); further standard-form handlers of ours are dropped,
    so exactly one hook remains."""
    new = copy.deepcopy(data)
    key, done, emptied = spec.command_key, False, []
    for group in _covering_groups(new, spec):
        for handler in list(group):
            if not is_ours(handler, key) or command_form(handler[key]) is None:
                continue
            if done:
                group.remove(handler)
                emptied += [group] if not group else []
            else:
                handler[key], done = command, True
                set_fields(handler, spec, fail_mode)
    if spec.matcher is not None and emptied:
        entries = new["hooks"][spec.event]
        entries[:] = [e for e in entries if not any(_handlers(e) is g for g in emptied)]
    return new


def install(
    spec: Target | tuple[Target, ...], command: str, fail_mode: str = "open"
) -> Change:
    """Add our hook to the file of `spec` (one target, or several entries of one file: the shell's
    and the file tools'), or switch a standard-form entry of ours (the in-process hook or the thin
    client, of any install, guarded or bare) to `command` with the fields `set_fields` gives for
    `fail_mode`; one write for them all. Raise `SettingsError` for a file that is not JSON."""
    specs = spec if isinstance(spec, tuple) else (spec,)
    path = specs[0].path
    current = read_json(path)
    warnings = tuple(
        f"another {specs[0].event} hook also runs on {specs[0].matcher or 'shell commands'}: {c}"
        " (its rewrites race with ours)"
        for c in sibling_hooks(current.data, specs[0])
    )
    data, messages = current.data, []
    for one in specs:
        data, message = _installed(data, one, command, fail_mode)
        messages.append(message)
        if data is current.data and "customised" in message:
            messages.append("no other entry was added")  # a hook the user made their own
            break
    changed = data is not current.data and save(current, render_json(data, current.original))
    return Change(str(path), changed, "; ".join(dict.fromkeys(messages)), warnings)


def _installed(
    data: dict[str, Any], spec: Target, command: str, fail_mode: str
) -> tuple[dict[str, Any], str]:
    """`data` with our entry for `spec` running `command` (the same object when nothing changes),
    and what was done."""
    ours = our_commands(data, spec)
    where = f"{spec.path}" + (f" (for {spec.matcher})" if spec.tool else "")
    if command in ours and command_form(command) is None:  # e.g. the --system hook, as it was
        return data, f"already installed in {where}"
    standard = [c for c in ours if command_form(c) is not None]
    if ours and not standard:
        return data, (
            f"a customised rtk-policy hook is already installed in {where}: `{ours[0]}`;"
            " left as it is (run `rtk-policy uninstall` first to replace it)"
        )
    if standard:
        new = replace_entries(data, spec, command, fail_mode)
        if new == data:
            return data, f"already installed in {where}"
        old, now = shown(standard[0]), shown(command)
        if old == now:
            return new, f"updated the rtk-policy hook entry in {where}"
        return new, f"replaced `{old}` with `{now}` in {where}"
    return add_entry(data, spec, command, fail_mode), f"installed `{shown(command)}` in {where}"


def uninstall(spec: Target | tuple[Target, ...]) -> Change:
    """Remove our entries (of one target, or of several entries of one file) from its file; restore
    the backup's bytes when it then says the same."""
    specs = spec if isinstance(spec, tuple) else (spec,)
    path = specs[0].path
    current = read_json(path)
    present = [one for one in specs if installed(current.data, one)]
    if current.original is None or not present:
        return Change(str(path), False, f"no rtk-policy hook in {path}")
    new = current.data
    for one in present:
        new = remove_entries(new, one)
    changed = save(current, _restored_bytes(current, new, specs[0]))
    return Change(str(path), changed, f"removed the rtk-policy hook from {path}")


def _restored_bytes(current: JsonFile, new: dict[str, Any], spec: Target) -> bytes | None:
    """The original bytes when the backup matches `new`; None (delete) when we created the file."""
    try:
        backup: bytes | None = backup_path(spec.path).read_bytes()
    except OSError:
        backup = None
    if backup is not None:
        try:
            same = (json.loads(backup.decode("utf-8-sig")) if backup.strip() else {}) == new
        except ValueError:
            same = False
        if same:
            return backup
    elif new in ({}, dict(spec.top_defaults)):
        return None
    return render_json(new, current.original)
