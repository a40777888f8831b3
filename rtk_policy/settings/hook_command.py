"""The hook command `init` writes: our invocation behind a POSIX guard, so that a broken install
answers the way the user chose instead of exiting with a code the agent reads as a block.

Every agent runs a hook command through a shell (Claude Code: `$SHELL -c`, Codex: `$SHELL -lc`,
Gemini CLI: `bash -c`, Copilot CLI: `bash`), and what a broken install exits with differs per agent:
after `pip uninstall rtk-policy` with the venv kept, `python …/client.py` exits 2 ("can't open
file"), which Claude Code and Codex read as **block**; a removed venv gives 127, which Copilot CLI
(fail-closed on any non-zero exit) and Gemini CLI (any exit but 0 and 1, with text on stderr) also
read as a deny. So the command tests its own files first, with shell builtins only:

    [ -x PY ] && [ -f CLIENT ] && exec PY -S -I CLIENT AGENT; echo 'rtk-policy: …' >&2; exit 0

`exec` replaces the shell, so a working install costs no extra process (the two tests cost
microseconds). When a file is missing, the fallback prints the agent's own answer for the fail mode
chosen at `init` (`open`: nothing, `{}` for Cursor; `closed`: the agent's ask, a deny for Codex;
`deny`: its deny — `agent_module(agent).fail_answer`) and exits 0; `$RTK_POLICY_FAIL` in the
agent's environment can make it stricter, never looser (`test "$RTK_POLICY_FAIL" = deny && printf
… && exit 0` before the chosen answer). The syntax is also valid fish.
"""

from __future__ import annotations

import os
import shlex

from rtk_policy.agents import agent_module

#: The reason a fallback answer gives (no backslash: it sits in a single-quoted word).
MISSING = "its package or Python interpreter is missing: reinstall it or run rtk-policy uninstall"
FAIL_MODES = ("open", "closed", "deny")
#: What the fallback says on stderr, before the fail mode's answer.
NOTICE = "rtk-policy: the hook cannot run ({missing}); fail mode {mode}"


def guarded(invocation: list[str], checks: list[tuple[str, str]], agent: str, mode: str) -> str:
    """`invocation` behind `[ TEST PATH ]` for each of `checks` (`-x` an executable, `-f` a
    file), with the fallback answer of fail `mode` for `agent` (see the module docstring)."""
    if os.name == "nt":  # no POSIX shell to run the guard: the bare invocation
        return shlex.join(invocation)
    tests = " && ".join(f"[ {test} {shlex.quote(path)} ]" for test, path in checks)
    notice = NOTICE.format(missing=MISSING, mode=mode)
    parts = [f"{tests} && exec {shlex.join(invocation)}", f"echo {shlex.quote(notice)} >&2"]
    for stricter in reversed(FAIL_MODES[FAIL_MODES.index(mode) + 1 :]):  # deny first
        printed = _printf(agent, stricter)
        parts.append(f'test "$RTK_POLICY_FAIL" = {stricter} && {printed} && exit 0')
    printed = _printf(agent, mode)
    parts += [printed, "exit 0"] if printed else ["exit 0"]
    return "; ".join(parts)


def _printf(agent: str, mode: str) -> str:
    """`printf` of `agent`'s answer for fail `mode` ("" when that answer is no output)."""
    answer = agent_module(agent).fail_answer(mode, MISSING)
    if answer is None:
        return ""
    if "\\" in answer:  # fish reads backslashes in single quotes: never write such a line
        raise ValueError(f"fallback answer not quotable for every shell: {answer}")
    return f"printf '%s\\n' {shlex.quote(answer)}"


def _tokens(command: str) -> list[str]:
    """The shell words and operators of `command` (`;`, `&&`, `>&` are tokens of their own)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def unguarded(command: str) -> list[str] | None:
    """The words `command` runs: the invocation after `exec` for a guarded command, else all its
    words (None when it is not valid shell quoting)."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return None
    if tokens[:1] == ["["] and "exec" in tokens:
        start = tokens.index("exec") + 1
        end = tokens.index(";", start) if ";" in tokens[start:] else len(tokens)
        return tokens[start:end]
    try:
        return shlex.split(command)
    except ValueError:
        return None


def guard_paths(command: str) -> list[tuple[str, str]]:
    """The `(test, path)` pairs a guarded command checks before it runs ([] for another command)."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return []
    found = []
    for index, token in enumerate(tokens[:-3]):
        if token == "[" and tokens[index + 3] == "]" and tokens[index + 1] in ("-x", "-f"):
            found.append((tokens[index + 1], tokens[index + 2]))
    return found


def fallback_mode(command: str) -> str | None:
    """The fail mode a guarded command answers with when it cannot run, as its stderr notice
    names it (None: not a guarded command)."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return None
    prefix = NOTICE.format(missing=MISSING, mode="")
    for token in tokens if tokens[:1] == ["["] else ():
        if token.startswith(prefix) and token[len(prefix) :] in FAIL_MODES:
            return token[len(prefix) :]
    return None
