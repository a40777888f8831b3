"""Gemini CLI's own shell permission rules, as Claude Code `Bash(…)` patterns (deny, ask, allow).

What Gemini CLI 0.61 reads (its `policy/config.ts` and `policy/toml-loader.ts`, checked in the
pinned npm bundle), and what we take from it:

- **Settings** (`tools` in `settings.json`: the system file `$GEMINI_CLI_SYSTEM_SETTINGS_PATH` or
  `/etc/gemini-cli/settings.json`, the user's `~/.gemini/settings.json` — `$GEMINI_CLI_HOME` moves
  the home —, and the project's `<cwd>/.gemini/settings.json`): `tools.allowed` entries are allow
  rules, `tools.exclude` deny rules, `tools.confirmationRequired` ask rules. An entry is
  `run_shell_command(PREFIX)` or `ShellTool(PREFIX)`, or the bare tool name (every command, `*`).
- **Policy files** (`*.toml` in `/etc/gemini-cli/policies`, `~/.gemini/policies` and
  `<cwd>/.gemini/policies`): each `[[rule]]` whose `toolName` is the shell tool (or `*`) with a
  `decision` of `allow`, `deny` or `ask_user`; its `commandPrefix` (a string or a list) gives the
  patterns, and a rule with neither `commandPrefix`, `commandRegex` nor `argsPattern` covers every
  command. A deny or ask rule matching by `commandRegex` cannot be written as a pattern: Gemini
  applies it itself, to the start of the command it runs, so a command it matches is kept as typed
  (`keep`: `^REGEX` entries for `exclude_commands`), never rewritten past it. Rules matching by
  `argsPattern` are not read.
- **Policy paths** in settings (`policyPaths`, `adminPolicyPaths`: files or folders of `*.toml`)
  and on Gemini's command line (`--policy`, `--admin-policy`, read by `gemini_cli` from the Gemini
  process above the hook) are read as the policies folders are.
- **Allow lists narrow**: a `tools.allowed` (or `tools.core`) entry with a command makes Gemini deny
  every *other* shell command, above every default and `--yolo` rule — our rewrite `rtk …` included,
  so a command the list allows would be denied once rewritten. While such a list is in force and
  does not allow `rtk`, nothing is rewritten (`keep` holds `EVERY_COMMAND`); add
  `run_shell_command(rtk)` to the list to get the rewrites.

Gemini's `commandPrefix` matches the command when it starts with the prefix followed by a space or
its end: what a Claude pattern without `*` means. Gemini picks the rule of highest priority; we take
every rule, so any deny wins (stricter, never looser). An allow rule that applies only in some
approval `modes` is not read (the hook does not know Gemini's mode); deny and ask rules are read
whatever their modes. The project's allow rules are read only when Gemini trusts the folder
(`~/.gemini/trustedFolders.json`, or `GEMINI_CLI_TRUST_WORKSPACE=true`); its deny and ask rules
always (a project may only tighten).
"""

from __future__ import annotations

import io
import json
import os
import sys

from rtk_policy.config.paths import files_ending
from rtk_policy.settings.agent_rules import EVERY_COMMAND
from rtk_policy.settings.claude_rules import read_rule_file, read_settings, warn
from rtk_policy.util import environ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

SHELL_TOOLS = ("run_shell_command", "ShellTool")
DECISIONS = {"allow": "allow", "deny": "deny", "ask_user": "ask"}
VERDICTS = ("deny", "ask", "allow", "keep")
LISTS = {"allowed": "allow", "core": "allow", "exclude": "deny", "confirmationRequired": "ask"}
#: A rewritten command, to ask whether an allow list lets rewrites through.
REWRITTEN = "rtk git status"
TRUSTING = ("TRUST_FOLDER", "TRUST_PARENT")


def gemini_dir() -> str:
    """`~/.gemini`, under `$GEMINI_CLI_HOME` when set."""
    return os.path.join(environ.get("GEMINI_CLI_HOME") or environ.expand_user("~"), ".gemini")


def system_dir() -> str:
    """Gemini's system configuration folder on this platform."""
    if sys.platform == "darwin":
        return "/Library/Application Support/GeminiCli"
    return "C:\\ProgramData\\gemini-cli" if os.name == "nt" else "/etc/gemini-cli"


def layers(cwd: str) -> list[tuple[str, str, bool]]:
    """(settings file, policies folder, is the project's) of each layer, lowest first."""
    system_settings = environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or os.path.join(
        system_dir(), "settings.json"
    )
    user, project = gemini_dir(), os.path.join(cwd, ".gemini")
    return [
        (system_settings, os.path.join(system_dir(), "policies"), False),
        (os.path.join(user, "settings.json"), os.path.join(user, "policies"), False),
        (os.path.join(project, "settings.json"), os.path.join(project, "policies"), True),
    ]


def rule_paths(cwd: str) -> tuple[str, ...]:
    """Every path whose content decides the rules for `cwd` (for a stat check of a memo)."""
    paths = [os.path.join(os.path.dirname(gemini_dir()), ".gemini", "trustedFolders.json")]
    for settings, folder, _ in layers(cwd):
        paths += [settings, folder, *files_ending(folder, ".toml")]
        for extra in settings_policy_paths(read_settings(settings, io.StringIO())):
            paths += [extra, *files_ending(extra, ".toml")]
    return tuple(paths)


def shell_pattern(entry: Any) -> str | None:
    """The pattern of a `tools.*` entry: `run_shell_command(x)` → x, the bare shell tool → `*`."""
    if not isinstance(entry, str):
        return None
    if entry in SHELL_TOOLS:
        return "*"
    for tool in SHELL_TOOLS:
        if entry.startswith(tool + "(") and entry.endswith(")"):
            return entry[len(tool) + 1 : -1].strip() or "*"
    return None


def settings_rules(settings: Any) -> dict[str, list[str]]:
    """The patterns of one parsed settings file's `tools` lists, per verdict."""
    found: dict[str, list[str]] = {verdict: [] for verdict in VERDICTS}
    tools = settings.get("tools") if isinstance(settings, dict) else None
    for key, verdict in LISTS.items():
        entries = tools.get(key) if isinstance(tools, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            pattern = shell_pattern(entry)
            if pattern is not None:
                found[verdict].append(pattern)
            if verdict == "allow" and pattern not in (None, "*"):
                found["narrows"] = ["yes"]  # Gemini now denies every other shell command
    return found


def toml_rules(path: str, stderr: IO[str] | None = None) -> dict[str, list[str]]:
    """The patterns of one policy file's shell rules, per verdict (a malformed file: a warning)."""
    import tomllib

    found: dict[str, list[str]] = {verdict: [] for verdict in VERDICTS}
    try:
        rules = tomllib.loads(read_rule_file(path).decode("utf-8")).get("rule", [])
    except FileNotFoundError:
        return found
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        warn(stderr, f"ignoring unreadable Gemini policy {path}: {error}")  # as Gemini does
        return found
    for rule in rules if isinstance(rules, list) else ():
        verdict, patterns = rule_patterns(rule)
        if verdict is not None:
            found[verdict] += patterns
    return found


def rule_patterns(rule: Any) -> tuple[str | None, list[str]]:
    """(verdict, patterns) of one `[[rule]]`, (None, []) when it is not a shell rule we can read."""
    if not isinstance(rule, dict):
        return None, []
    tools = rule.get("toolName")
    tools = tools if isinstance(tools, list) else [tools]
    verdict = DECISIONS.get(rule.get("decision"))  # type: ignore[arg-type]
    if verdict is None or not any(tool in (*SHELL_TOOLS, "*") for tool in tools):
        return None, []
    if verdict == "allow" and rule.get("modes"):
        return None, []  # an allow for some approval modes only: the hook does not know the mode
    prefixes = rule.get("commandPrefix")
    if prefixes is None:
        regex = rule.get("commandRegex")
        if isinstance(regex, str) and regex and verdict != "allow":
            return "keep", [f"^(?:{regex})"]  # Gemini applies it: never rewrite what it matches
        if regex is not None or rule.get("argsPattern") is not None:
            return None, []
        return verdict, ["*"]
    prefixes = prefixes if isinstance(prefixes, list) else [prefixes]
    return verdict, [p for p in prefixes if isinstance(p, str) and p.strip()]


def folder_trusted(cwd: str) -> bool:
    """Whether Gemini trusts `cwd`: `GEMINI_CLI_TRUST_WORKSPACE`, else the longest matching rule
    of `trustedFolders.json` (TRUST_FOLDER: that folder; TRUST_PARENT: its parent; DO_NOT_TRUST)."""
    if environ.get("GEMINI_RESTRICTED_MODE") == "true":
        return False
    env = environ.get("GEMINI_CLI_TRUST_WORKSPACE")
    if env in ("true", "false"):
        return env == "true"
    path = environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(
        gemini_dir(), "trustedFolders.json"
    )
    try:
        with open(path, encoding="utf-8") as handle:
            rules = json.load(handle)
    except (OSError, ValueError):
        return False
    here = os.path.realpath(cwd)
    best, trusted = -1, False
    for rule_path, level in rules.items() if isinstance(rules, dict) else ():
        folder = os.path.dirname(rule_path) if level == "TRUST_PARENT" else rule_path
        folder = os.path.realpath(folder)
        inside = here == folder or here.startswith(folder.rstrip(os.sep) + os.sep)
        if inside and len(rule_path) > best:
            best, trusted = len(rule_path), level in TRUSTING
    return trusted


def load_gemini_rules(cwd: str, stderr: IO[str] | None = None) -> dict[str, list[str]]:
    """The merged deny, ask and allow patterns of every Gemini layer for a call from `cwd`, and the
    `keep` entries (commands a rewrite must leave as typed)."""
    merged: dict[str, list[str]] = {verdict: [] for verdict in VERDICTS}
    seen: set[str] = set()
    narrowed = False
    for settings, folder, is_project in layers(cwd):
        allow_ok = not is_project or folder_trusted(cwd)
        for path in (settings, *files_ending(folder, ".toml")):
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            if path == settings:
                data = read_settings(path, stderr)
                found = settings_rules(data)
                extra = policy_path_rules(settings_policy_paths(data), stderr)
                for verdict, patterns in extra.items():
                    found[verdict] = found.get(verdict, []) + patterns
            else:
                found = toml_rules(path, stderr)
            if found.pop("narrows", None) and allow_ok:
                narrowed = True
            for verdict, patterns in found.items():
                if verdict != "allow" or allow_ok:
                    merged[verdict] += [p for p in patterns if p not in merged[verdict]]
    if narrowed:
        merged["keep"] += narrowed_keep(merged["allow"])
    return merged


def narrowed_keep(allow: list[str]) -> list[str]:
    """`[EVERY_COMMAND]` when an allow list is in force that does not let `rtk …` through (a
    rewrite would be denied by Gemini's allow list), else []."""
    return [] if rewrites_allowed(allow) else [EVERY_COMMAND]


def settings_policy_paths(settings: Any) -> list[str]:
    """The `policyPaths` and `adminPolicyPaths` of a parsed settings file (`~` expanded)."""
    paths: list[str] = []
    for key in ("policyPaths", "adminPolicyPaths"):
        entries = settings.get(key) if isinstance(settings, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, str) and entry:
                paths.append(os.path.normpath(environ.expand_user(entry)))
    return paths


def policy_path_rules(paths: list[str], stderr: IO[str] | None = None) -> dict[str, list[str]]:
    """The merged patterns of policy paths as Gemini takes them: a folder means its `*.toml`
    files, a file itself; a missing path gives nothing (Gemini reports it and goes on)."""
    merged: dict[str, list[str]] = {verdict: [] for verdict in VERDICTS}
    for path in paths:
        files = files_ending(path, ".toml") if os.path.isdir(path) else [path]
        for file in files:
            for verdict, patterns in toml_rules(file, stderr).items():
                merged[verdict] += [p for p in patterns if p not in merged[verdict]]
    return merged


def rewrites_allowed(patterns: list[str]) -> bool:
    """Whether an allow pattern lets a rewritten `rtk …` command through."""
    from rtk_policy.policy.bash_pattern import bash_rule_matches

    return any(bash_rule_matches(pattern, REWRITTEN) for pattern in patterns)
