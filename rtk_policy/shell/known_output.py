"""The output of a command substitution bash can be read to know: `echo` or `printf` of literal
words (`$(echo rm -rf /)`, `` `printf '%s' ls` ``).

Bash runs a substitution before the command it is in, so where its output does not depend on
anything outside the text, the command runs with that text. `known_output` gives it, or None
whenever it is unsure: any expansion, quoting it cannot read, a glob, a tilde, a redirect or an
operator, a backslash anywhere in an `echo` (its `-e`, or bash's `xpg_echo`, would interpret it),
a `printf` format with anything but `%s`, `%%` and `\\n`.
"""

from __future__ import annotations

#: characters that make an unquoted word mean more than its text (or end the command)
_UNSAFE = frozenset(" \t\n\\'\"$`;&|<>(){}[]*?~#!")
_ECHO_OPTION = frozenset("neE")


def known_output(substitution: str) -> str | None:
    """What `$(…)` or `` `…` `` (as typed) prints, trailing newlines removed as bash removes them;
    None when it cannot be known here."""
    if substitution.startswith("$((") or len(substitution) < 3:
        return None
    if substitution.startswith("$(") and substitution.endswith(")"):
        body = substitution[2:-1]
    elif substitution.startswith("`") and substitution.endswith("`"):
        body = substitution[1:-1]
    else:
        return None
    words = literal_words(body)
    if not words:
        return None
    if words[0] == "echo":
        out = _echo(words[1:])
    elif words[0] == "printf":
        out = _printf(words[1:])
    else:
        return None
    if out is None or any(c in out for c in "*?["):  # an unquoted result would be globbed
        return None
    return out.rstrip("\n")


def literal_words(body: str) -> list[str] | None:
    """The words of `body` when each is literal text (plain characters, '…' without a newline,
    "…" without `$`, `` ` ``, `\\`, `!` or a newline); None otherwise."""
    words: list[str] = []
    i, n = 0, len(body)
    while i < n:
        if body[i] in " \t":
            i += 1
            continue
        word: list[str] = []
        while i < n and body[i] not in " \t":
            c = body[i]
            if c in "'\"":
                j = body.find(c, i + 1)
                inner = body[i + 1 : j] if j > 0 else ""
                bad = "\n" if c == "'" else "\n$`\\!"
                if j < 0 or any(b in inner for b in bad):
                    return None
                word.append(inner)
                i = j + 1
            elif c in _UNSAFE:
                return None
            else:
                word.append(c)
                i += 1
        words.append("".join(word))
    return words


def _echo(args: list[str]) -> str | None:
    """What `echo ARGS` prints: leading `-n`/`-e`/`-E` clusters are options."""
    newline = True
    while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= _ECHO_OPTION:
        newline = newline and "n" not in args[0]
        args = args[1:]
    text = " ".join(args)
    if "\\" in text:
        return None
    return text + ("\n" if newline else "")


def _printf(args: list[str]) -> str | None:
    """What `printf FORMAT ARGS` prints for a FORMAT of text, `%s`, `%%` and `\\n` only (the format
    is reused until the arguments are used up, as printf does)."""
    if not args or args[0].startswith("-"):
        return None
    fmt, rest = args[0].replace("\\n", "\n"), args[1:]
    if "\\" in fmt or any("\\" in a for a in rest):
        return None
    parts = fmt.replace("%%", "\x00").split("%s")
    if any("%" in p for p in parts):
        return None
    slots = len(parts) - 1
    out: list[str] = []
    while True:
        taken, rest = rest[:slots], rest[slots:]
        taken += [""] * (slots - len(taken))
        out.append(parts[0] + "".join(v + p for v, p in zip(taken, parts[1:], strict=True)))
        if not rest or not slots:
            break
    return "".join(out).replace("\x00", "%")
