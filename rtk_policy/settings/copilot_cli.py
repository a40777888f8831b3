"""The shell rules on Copilot CLI's own command line, read from the Copilot process above the hook.

Copilot CLI 1.0.102 keeps its tool permission rules only on its command line (`copilot help
permissions`; `copilot help config` lists no persisted tool rule, only URL lists and trusted
folders): `--allow-tool` and `--deny-tool`, variadic (`[<tools>...]`), each rule `kind(argument)`.
A shell rule is `shell(COMMAND)`: an exact match of the command's identity — its name, or for
`git` and `gh` the name and subcommand (`shell(git push)`, `shell(gh pr create)`) —,
`shell(STEM:*)` every command whose name is STEM, and a bare `shell` every command. Deny rules
win over allow rules, also over `--allow-all-tools`. `--available-tools` / `--excluded-tools` only
hide tools from the model (a hidden shell tool never reaches the hook): no rule for us.

What we make of them, never looser than Copilot:
- a rule our pattern says exactly (`STEM:*`; one word, not `git`/`gh`; `git SUB`, `gh GROUP
  SUB`; bare `shell`) becomes that Claude pattern: a deny rule is then our deny, an allow
  rule auto-approves a rewrite;
- any other deny rule (e.g. `shell(git)`, `shell(npm run build)`) is kept as typed (`keep`: the
  commands starting with it are never rewritten, so Copilot's own rule judges the command as
  typed); any other allow rule is not read.
Copilot's process is found by `host_process` (not found: `seen` False, no rewrite unless
`rewrite_unapproved`).
"""

from __future__ import annotations

import os

from rtk_policy.settings.host_process import CliRules, host_argv, options

DENY_OPTION, ALLOW_OPTION = "--deny-tool", "--allow-tool"
#: programs Copilot identifies by their subcommand, and the words of that identity
SUBCOMMAND_WORDS = {"git": 2, "gh": 3}


def is_copilot(argv: list[str]) -> bool:
    """True for Copilot CLI: its native binary (`…/copilot-linux-x64/copilot`, `copilot`) or the
    npm loader (`node …/@github/copilot/npm-loader.js`)."""
    for word in argv[:2]:
        if os.path.basename(word) == "copilot" or "/@github/copilot" in word:
            return True
    return False


def host_rules(start_pid: int | None = None) -> CliRules:
    """The rules of the Copilot CLI process above `start_pid` (None: this process; 0: unknown)."""
    found = host_argv(start_pid, is_copilot, "Copilot CLI")
    if isinstance(found, CliRules):
        return found
    pid, argv, _cwd = found
    deny, allow, keep = rules_of_argv(argv)
    why = f"the command line of Copilot CLI (pid {pid})"
    return CliRules(True, deny=deny, allow=allow, why=why, keep=keep)


def rules_of_argv(argv: list[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The (deny, allow, keep) of a Copilot command line's `--deny-tool` / `--allow-tool` rules."""
    from rtk_policy.settings.agent_rules import keep_entry
    from rtk_policy.settings.claude_cli import split_tools

    deny: list[str] = []
    allow: list[str] = []
    keep: list[str] = []
    for option, values in options(argv[1:]):
        if option not in (DENY_OPTION, ALLOW_OPTION):
            continue
        for rule in (rule for value in values for rule in split_tools(value)):
            argument = shell_argument(rule)
            if argument is None:
                continue
            pattern = exact_pattern(argument)
            if pattern is not None:
                (deny if option == DENY_OPTION else allow).append(pattern)
            elif option == DENY_OPTION:
                keep.append(keep_entry(argument))  # never rewritten
    return tuple(dict.fromkeys(deny)), tuple(dict.fromkeys(allow)), tuple(dict.fromkeys(keep))


def shell_argument(rule: str) -> str | None:
    """The argument of a `shell(…)` rule ("" for a bare `shell`), None for another kind."""
    rule = rule.strip()
    if rule.lower() == "shell":
        return ""
    if rule[:6].lower() != "shell(" or not rule.endswith(")"):
        return None
    return " ".join(rule[6:-1].split())


def exact_pattern(argument: str) -> str | None:
    """The Claude pattern meaning what Copilot's `shell(argument)` means, None when none does."""
    words = argument.split()
    if not words:
        return "*"
    if argument.endswith(":*"):
        stem = argument[:-2]
        return f"{stem}:*" if stem and " " not in stem and "*" not in stem else None
    if any("*" in word for word in words):
        return None
    if len(words) == SUBCOMMAND_WORDS.get(words[0], 1):
        return argument
    return None
