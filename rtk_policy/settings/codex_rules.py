"""Codex's own execpolicy rules, as Claude Code `Bash(…)` patterns (deny, allow) and commands kept
as typed (`keep`).

Codex 0.169 loads every `*.rules` file of the `rules/` folder of each config layer
(`/etc/codex/rules`, `$CODEX_HOME/rules` — `~/.codex` by default —, and `.codex/rules` of a
project, from its git top level down to the working folder) and the managed
`[rules] prefix_rules` of `/etc/codex/requirements.toml`, and matches each simple command of a
shell call against them: a `prefix_rule` matches when its pattern is a prefix of the command's
words, and the strictest matching decision applies. It matches them against the command our
hook hands back, so `rtk git push` escapes a rule on `git push`; hence:

- `forbidden` → a deny pattern (our deny stops the command as typed, wrappers peeled too);
- `prompt` → `keep`: the command is never rewritten, so Codex asks about the command as typed;
- `allow` → an allow pattern (it auto-approves a rewrite), from the system and user layers only:
  a project's rules may only tighten (Codex reads them only in a project it trusts).

A pattern position holding alternatives gives one pattern per combination. A rules file we cannot
read — syntax outside `codex_execpolicy`'s subset, not UTF-8, not a regular file, over 1 MiB, not
readable — is never ignored: a warning says so and no command is rewritten (`keep` holds every
command), since a rewrite could slip past any rule it holds. `codex exec --ignore-rules` is not
honoured here (its rules still hold; stricter).
"""

from __future__ import annotations

import os

from rtk_policy.config.paths import files_ending
from rtk_policy.settings.claude_rules import read_rule_file, warn
from rtk_policy.util import environ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

SYSTEM_DIR = "/etc/codex"
VERDICTS = ("deny", "ask", "allow", "keep")
#: combinations of one rule's alternatives beyond which the file is not read
MAX_COMBINATIONS = 256
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,~")


def codex_home() -> str:
    """`$CODEX_HOME`, else `~/.codex`."""
    return environ.get("CODEX_HOME") or os.path.join(environ.expand_user("~"), ".codex")


def rule_folders(cwd: str) -> list[tuple[str, bool]]:
    """(rules folder, is the project's) of every layer, lowest first."""
    from rtk_policy.settings.cursor_rules import folders_from_top

    folders = [
        (os.path.join(SYSTEM_DIR, "rules"), False),
        (os.path.join(codex_home(), "rules"), False),
    ]
    return folders + [(os.path.join(f, ".codex", "rules"), True) for f in folders_from_top(cwd)]


def requirements_file() -> str:
    """The managed requirements file."""
    return os.path.join(SYSTEM_DIR, "requirements.toml")


def rule_paths(cwd: str) -> tuple[str, ...]:
    """Every path whose content decides the rules for `cwd` (for a stat check of a memo)."""
    paths = [requirements_file()]
    for folder, _ in rule_folders(cwd):
        paths += [folder, *files_ending(folder, ".rules")]
    return tuple(paths)


def load_codex_rules(cwd: str, stderr: IO[str] | None = None) -> dict[str, list[str]]:
    """The merged deny and allow patterns and `keep` entries of every Codex rules file for `cwd`."""
    from rtk_policy.settings.codex_execpolicy import RulesError, parse_rules

    merged: dict[str, list[str]] = {verdict: [] for verdict in VERDICTS}
    seen: set[str] = set()
    sources: list[tuple[str, list[tuple[str, list[list[str]]]], bool]] = []
    try:
        sources.append((requirements_file(), requirement_rules(requirements_file()), False))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        sources.append(
            (requirements_file(), _unreadable(requirements_file(), error, stderr), False)
        )
    for folder, is_project in rule_folders(cwd):
        for path in files_ending(folder, ".rules"):
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            try:
                rules = parse_rules(read_rule_file(path).decode("utf-8"))
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError, RulesError) as error:
                rules = _unreadable(path, error, stderr)
            sources.append((path, rules, is_project))
    for path, rules, is_project in sources:
        for decision, pattern in rules:
            try:
                _add(merged, decision, pattern, is_project)
            except ValueError as error:
                _add(merged, *_unreadable(path, error, stderr)[0], False)
    return merged


def requirement_rules(path: str) -> list[tuple[str, list[list[str]]]]:
    """The `(decision, pattern)` of the managed `[rules] prefix_rules` of a requirements file
    (`pattern = [{token = "git"}, {any_of = ["push", "fetch"]}]`, decision `prompt` or
    `forbidden`); [] when the file is missing. Raises ValueError for a rule we cannot read."""
    try:
        text = read_rule_file(path).decode("utf-8")
    except FileNotFoundError:
        return []
    import tomllib  # only when there is a file: the hook's cold path

    data = tomllib.loads(text)
    section = data.get("rules")
    entries = section.get("prefix_rules", []) if isinstance(section, dict) else []
    rules: list[tuple[str, list[list[str]]]] = []
    for entry in entries if isinstance(entries, list) else [entries]:
        decision = entry.get("decision") if isinstance(entry, dict) else None
        tokens = entry.get("pattern") if isinstance(entry, dict) else None
        if decision not in ("prompt", "forbidden") or not isinstance(tokens, list) or not tokens:
            raise ValueError(f"a [rules] prefix_rules entry we cannot read: {entry!r}")
        rules.append((decision, [_requirement_token(token) for token in tokens]))
    return rules


def _requirement_token(token: Any) -> list[str]:
    words = token.get("any_of", [token.get("token")]) if isinstance(token, dict) else None
    if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
        raise ValueError(f"a pattern token we cannot read: {token!r}")
    return words


def _unreadable(path: str, error: object, stderr: IO[str] | None) -> list[tuple[str, list]]:
    """Say that `path` is not read, and stand for it with a rule keeping every command as typed."""
    warn(stderr, f"cannot read the Codex rules {path} ({error}): no command is rewritten")
    return [("keep-all", [])]


def _add(
    merged: dict[str, list[str]], decision: str, pattern: list[list[str]], project: bool
) -> None:
    """Add one rule's patterns (or keep entries) to `merged`."""
    from rtk_policy.settings.agent_rules import EVERY_COMMAND, keep_entry

    if decision == "keep-all":
        _extend(merged["keep"], [EVERY_COMMAND])
    elif decision == "forbidden":
        _extend(merged["deny"], [_joined(words) for words in combinations(pattern)])
    elif decision == "prompt":
        prefixes = [plain_prefix(words) for words in combinations(pattern)]
        _extend(merged["keep"], [keep_entry(p) if p else EVERY_COMMAND for p in prefixes])
    elif not project:
        words_lists = [words for words in combinations(pattern) if not any("*" in w for w in words)]
        _extend(merged["allow"], [_joined(words) for words in words_lists])


def combinations(pattern: list[list[str]]) -> list[list[str]]:
    """Every word list a pattern of alternatives spells (ValueError beyond MAX_COMBINATIONS)."""
    spelled: list[list[str]] = [[]]
    for alternatives in pattern:
        spelled = [words + [word] for words in spelled for word in alternatives]
        if len(spelled) > MAX_COMBINATIONS:
            raise ValueError(f"a prefix_rule spells more than {MAX_COMBINATIONS} prefixes")
    return spelled


def plain_prefix(words: list[str]) -> str:
    """The words up to the first one that is not a plain shell word (a shorter prefix keeps more
    commands as typed, never fewer)."""
    plain: list[str] = []
    for word in words:
        if not word or not set(word) <= _PLAIN:
            break
        plain.append(word)
    return " ".join(plain) if plain else ""


def _joined(words: list[str]) -> str:
    """The words as a Claude pattern: quoted for bash as `shell_join` quotes a command's words."""
    from shlex import quote

    return " ".join(quote(word) for word in words)


def _extend(into: list[str], items: list[str]) -> None:
    into += [item for item in items if item not in into]
