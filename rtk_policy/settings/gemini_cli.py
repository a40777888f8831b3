"""The shell rules on Gemini CLI's own command line, read from the Gemini process above the hook.

Gemini CLI 0.61 (`gemini.js`'s yargs options, checked in the pinned npm bundle) takes policy files
or folders with `--policy P` and `--admin-policy P` (each once per option, repeatable, values split
at commas; a folder means its `*.toml` files, a leading `~` is the home folder, a relative path is
the Gemini process's folder's) and the deprecated allow list `--allowed-tools T` (read as
`tools.allowed` is: allow rules that make Gemini deny every other shell command). `--policy`
replaces the user's policies folder in Gemini; we read both, so a deny rule of either holds.
The policy files are read by `gemini_rules.toml_rules`, and Gemini's process is found by
`host_process` (not found: `seen` False, no rewrite unless `rewrite_unapproved`).
"""

from __future__ import annotations

import os

from rtk_policy.settings.host_process import CliRules, host_argv, options, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

POLICY_OPTIONS = ("--policy", "--admin-policy")
ALLOWED_OPTION = "--allowed-tools"


def is_gemini(argv: list[str]) -> bool:
    """True for Gemini CLI's Node process: `node …/gemini-cli/bundle/gemini.js …` (also its relaunch
    with memory flags) or a `gemini` launcher."""
    for word in argv[:4]:
        if os.path.basename(word) in ("gemini", "gemini.js") or "/gemini-cli/" in word:
            return True
    return False


def host_rules(start_pid: int | None = None, stderr: IO[str] | None = None) -> CliRules:
    """The rules of the Gemini CLI process above `start_pid` (None: this process; 0: unknown)."""
    found = host_argv(start_pid, is_gemini, "Gemini CLI")
    if isinstance(found, CliRules):
        return found
    pid, argv, cwd = found
    merged = rules_of_argv(argv, cwd, stderr)
    return CliRules(
        True,
        tuple(merged["deny"]),
        tuple(merged["ask"]),
        tuple(merged["allow"]),
        f"the command line of Gemini CLI (pid {pid})",
        tuple(merged["keep"]),
    )


def option_values(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """The values of the one-value options `names`, each split at commas as yargs' coerce does."""
    values: list[str] = []
    for option, words in options(argv[1:]):
        if option in names and words:
            values += [part.strip() for part in words[0].split(",") if part.strip()]
    return values


def rules_of_argv(argv: list[str], cwd: str, stderr: IO[str] | None = None) -> dict[str, list[str]]:
    """The deny, ask, allow and keep entries of a Gemini command line's policy paths and allow
    list (`gemini_rules.VERDICTS`)."""
    from rtk_policy.settings.gemini_rules import (
        VERDICTS,
        narrowed_keep,
        policy_path_rules,
        settings_rules,
    )

    merged: dict[str, list[str]] = {verdict: [] for verdict in VERDICTS}
    paths = [resolve(path, cwd) for path in option_values(argv, POLICY_OPTIONS)]
    found = policy_path_rules(paths, stderr)
    allowed = option_values(argv, (ALLOWED_OPTION,))
    listed = settings_rules({"tools": {"allowed": allowed}})
    narrows = bool(listed.pop("narrows", None))
    for part in (found, listed):
        for verdict, patterns in part.items():
            merged[verdict] += [p for p in patterns if p not in merged[verdict]]
    if narrows:
        merged["keep"] += narrowed_keep(merged["allow"])
    return merged
