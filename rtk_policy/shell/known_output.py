"""The output of a command substitution bash can be read to know: `echo` or `printf` of literal
words (`$(echo rm -rf /)`, `` `printf '%s' ls` ``), of substitutions known in turn up to
`MAX_DEPTH` deep (`$(echo $(echo rm))`, `` `echo \\`echo rm\\`` ``), and an empty one (`` `` ``).

Bash runs a substitution before the command it is in, so where its output does not depend on
anything outside the text, the command runs with that text. `known_output` gives it, or None
whenever it is unsure: any expansion, quoting it cannot read, a glob, a tilde, a redirect or an
operator, a backslash anywhere in an `echo` (its `-e`, or bash's `xpg_echo`, would interpret it),
a `printf` format with anything but `%s`, `%%` and `\\n`.
"""

from __future__ import annotations

from rtk_policy.shell.words import expansion_end

#: characters that make an unquoted word mean more than its text (or end the command)
_UNSAFE = frozenset(" \t\n\\'\"$`;&|<>(){}[]*?~#!")
#: how many substitutions deep, one inside another, an output is worked out
MAX_DEPTH = 4
_ECHO_OPTION = frozenset("neE")


def known_output(substitution: str, depth: int = 0) -> str | None:
    """What `$(…)` or `` `…` `` (as typed) prints, trailing newlines removed as bash removes them;
    None when it cannot be known here. `depth`: how deep in known substitutions this one is."""
    if substitution.startswith("$((") or len(substitution) < 2:
        return None
    if substitution.startswith("$(") and substitution.endswith(")"):
        body = substitution[2:-1]
    elif substitution.startswith("`") and substitution.endswith("`"):
        body = _unescaped(substitution[1:-1])
    else:
        return None
    if "\\\n" in body:
        body = _joined(body)
    if not body.strip(" \t"):
        return ""  # `` `` ``, `$()`: nothing runs, nothing is printed
    words = literal_words(body, depth)
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


def literal_words(body: str, depth: int = MAX_DEPTH) -> list[str] | None:
    """The words of `body` when each is literal text (plain characters, '…' without a newline,
    "…" without `\\`, `!` or a newline, substitutions whose output is known while `depth` is
    below `MAX_DEPTH`: split into words unless quoted); None otherwise."""
    words: list[str] = []
    word: list[str] = []
    started = False  # the word under way has a character or a quoted part
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c in " \t":
            if started:
                words.append("".join(word))
            word, started = [], False
            i += 1
        elif c == "'":
            j = body.find("'", i + 1)
            if j < 0 or "\n" in body[i + 1 : j]:
                return None
            word.append(body[i + 1 : j])
            started, i = True, j + 1
        elif c == '"':
            j = _double(body, i + 1, depth, word)
            if j < 0:
                return None
            started, i = True, j
        elif c == "`" or body.startswith("$(", i):
            j = expansion_end(body, i)
            out = known_output(body[i:j], depth + 1) if depth < MAX_DEPTH else None
            if out is None or any(g in out for g in "*?["):  # unquoted: it would be globbed
                return None
            fields = out.split()
            if fields and out[0] in " \t\n" and started:
                words.append("".join(word))
                word, started = [], False
            for k, field in enumerate(fields):
                if k:
                    words.append("".join(word))
                    word = []
                word.append(field)
                started = True
            if fields and out[-1] in " \t\n":
                words.append("".join(word))
                word, started = [], False
            i = j
        elif c in _UNSAFE:
            return None
        else:
            word.append(c)
            started, i = True, i + 1
    if started:
        words.append("".join(word))
    return words


def _double(body: str, i: int, depth: int, word: list[str]) -> int:
    """Read a "…" body from `i` into `word` (a known substitution in it kept whole); the index
    after its closing quote, or -1 when it cannot be read here."""
    n = len(body)
    while i < n:
        c = body[i]
        if c == '"':
            return i + 1
        if c == "`" or body.startswith("$(", i):
            j = expansion_end(body, i)
            out = known_output(body[i:j], depth + 1) if depth < MAX_DEPTH else None
            if out is None:
                return -1
            word.append(out)
            i = j
        elif c in "$`\\!\n":
            return -1
        else:
            word.append(c)
            i += 1
    return -1


def _joined(body: str) -> str:
    """`body` with its line continuations (a backslash before a newline, outside '…') removed,
    as bash removes them before it reads the words."""
    out: list[str] = []
    i, n, quote = 0, len(body), ""
    while i < n:
        c = body[i]
        if c == "\\" and quote != "'":
            if not body.startswith("\\\n", i):
                out.append(body[i : i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        out.append(c)
        i += 1
    return "".join(out)


def _unescaped(body: str) -> str:
    """The code of a backtick substitution: `\\$`, `` \\` `` and `\\\\` lose their backslash."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in "$`\\":
            out.append(body[i + 1])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


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
