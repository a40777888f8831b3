"""CEL functions of the RTK rewrite registry (reference §3.5–§3.10), registered on every backend.

Pure functions over plain strings and lists. The rewrite packs in `policies/rtk-rewrite*.yaml` say
*which* tool maps to *which* `rtk` command; these helpers only do the text work that CEL cannot do
comfortably: RTK's classification normal form, prefix replacement at word boundaries and exclusion
matching (the `rtk read` transform and the pipeline checks are in `functions_rtk_read.py`).

Text-level helpers work on the verbatim `segment.command` slice, split on IFS (space, tab, newline)
with quotes honoured, because RTK matches its rules against text: a CR, VT, FF or NBSP is a word
byte.
"""

from __future__ import annotations

from functools import lru_cache, partial

from rtk_policy.policy.functions import Function
from rtk_policy.shell.scripts import versioned
from rtk_policy.shell.words import assignment_name, dequote
from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

IFS = " \t\n"
_CONTINUATION = lazy(globals(), "_CONTINUATION", r"[ \t\v\f]*\\(?:\r\n|\n)[ \t\v\f]*")


def trim_ifs(text: str) -> str:
    """`text` without leading and trailing IFS blanks, except a blank a backslash escapes: bash
    reads `cat f\\ ` as the file `f␠`, so the word, and the rewrite, keep it (§3.1 step 4)."""
    trimmed = text.strip(IFS)
    if len(trimmed) == len(text) or not trimmed.endswith("\\"):
        return trimmed
    backslashes = len(trimmed) - len(trimmed.rstrip("\\"))
    if backslashes % 2 == 0:
        return trimmed
    start = len(text) - len(text.lstrip(IFS))
    return text[start : start + len(trimmed) + 1]


def collapse_continuations(text: str) -> str:
    """Collapse every unquoted backslash-newline (and the blanks around it) into one space
    (§3.1)."""
    if "\\" not in text:
        return text
    out: list[str] = []
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if not quote and c == "\\":
            m = _CONTINUATION.match(text, i)
            if m is not None:
                while out and out[-1] in " \t\v\f":
                    out.pop()
                out.append(" ")
                i = m.end()
                continue
            out.append(text[i : i + 2])
            i += 2
            continue
        if c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
        elif quote == '"' and c == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


#: tab and newline as spaces: the same offsets, one blank to split on
_IFS_AS_SPACE = str.maketrans("\t\n", "  ")


def _bare_words(text: str) -> list[tuple[str, int]]:
    """The runs of non-IFS characters of `text`: (word, start offset) pairs."""
    flat = text.translate(_IFS_AS_SPACE) if "\t" in text or "\n" in text else text
    words: list[tuple[str, int]] = []
    at = 0
    for part in flat.split(" "):
        if part:
            words.append((text[at : at + len(part)], at))
        at += len(part) + 1
    return words


def split_words(text: str) -> list[tuple[str, int]]:
    """Split `text` on unquoted IFS whitespace: (raw word, start offset) pairs."""
    if "'" not in text and '"' not in text and "\\" not in text:  # nothing quoted: runs of non-IFS
        return _bare_words(text)
    words: list[tuple[str, int]] = []
    start, quote, i, n = -1, "", 0, len(text)
    while i < n:
        c = text[i]
        if not quote and c in IFS:
            if start >= 0:
                words.append((text[start:i], start))
                start = -1
            i += 1
            continue
        if start < 0:
            start = i
        if c == "\\" and quote != "'":
            i += 2
            continue
        if c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
        i += 1
    if start >= 0:
        words.append((text[start:], start))
    return words


def word_value(raw: str) -> str:
    """The value of a raw shell word, quotes removed."""
    return dequote(raw)[0]


# ---------------------------------------------------------------------------------------------
# classification normal form (§3.5 step 5)

_GIT_GLOBAL = lazy(
    globals(),
    "_GIT_GLOBAL",
    r"^(?:(?:-C[ \t\n]+\S+|-c[ \t\n]+\S+|--git-dir(?:=\S+|[ \t\n]+\S+)"
    r"|--work-tree(?:=\S+|[ \t\n]+\S+)"
    r"|--no-pager|--no-optional-locks|--bare|--literal-pathspecs)[ \t\n]+)+",
)
_GOLANGCI_VALUE_OPTS = frozenset(
    {"--color", "--config", "-c", "--concurrency", "-j", "--cpu-profile-path", "--mem-profile-path",
     "--trace-path", "--timeout", "--out-format", "--path-prefix"}
)  # fmt: skip


@lru_cache(maxsize=1024)  # pure: each segment's text is asked about by many rules
def rtk_norm(text: str) -> str:
    """RTK's classification form of a command: basename of the program, git and golangci-lint
    global options dropped. Used only for matching rule patterns; never emitted."""
    text = collapse_continuations(text).strip(IFS)  # matching only: an escaped blank ends a word
    if text.endswith("\\") and (len(text) - len(text.rstrip("\\"))) % 2:
        text = text[:-1].rstrip(IFS)
    first = _first_word(text)
    if not first:
        return ""
    rest = text[len(first) :]
    if "/" in first and not first.endswith("/"):
        first = first.rsplit("/", 1)[1]
    if first in ("git", "yadm"):
        body = rest.lstrip(IFS)
        # every global option starts with `-`: the regex runs only when one may be there
        rest = " " + (_GIT_GLOBAL.sub("", body) if body[0] == "-" else body) if body else ""
    elif first in ("golangci-lint", "golangci"):
        rest = _golangci_run_part(split_words(text)) or rest
    return first + rest


#: a word that `rtk_norm` keeps as it is: printable ASCII without quotes, backslash, slash, blank
_KEPT_WORD = lazy(globals(), "_KEPT_WORD", r"[!#-&(-.0-\[\]-~]+")
#: the directories of a first word that hold no blank, quote or backslash
_KEPT_DIRECTORIES = lazy(globals(), "_KEPT_DIRECTORIES", "[^ \t\n'\"\\\\]*/")


def rtk_norm_begins_with(command: str, word: str) -> bool:
    """True when `rtk_norm(command)` begins with `word` followed by a blank or the end, or `word`
    is not a plain word (printable ASCII without quotes, backslash, slash or blank), told from
    `command` alone: it begins with `word`, or with directories free of blanks, quotes and
    backslashes and `/word`, followed by IFS or the end. Then `collapse_continuations` leaves that
    start as it is (no quote or backslash before its end; the blanks it may drop after it are not
    part of it), `_first_word` ends there, its basename is `word`, and whatever follows (git's
    and golangci-lint's options dropped) is "" or begins with a blank. Plans that fold
    first-word tests, only ever for plain words, hold for such commands (`guards/first_word.py`).
    """
    size = len(word)
    at = 0 if command.startswith(word) else _after_directories(command, word)
    if at >= 0:
        after = command[at + size : at + size + 1]
        if not after or after in IFS:
            return True
    return _KEPT_WORD.fullmatch(word) is None


def _after_directories(command: str, word: str) -> int:
    """Where `word` starts after the plain directories that begin `command`, -1 if it does not."""
    found = _KEPT_DIRECTORIES.match(command) if "/" in command else None
    if found is None or not command.startswith(word, found.end()):
        return -1
    return found.end()


def _first_word(text: str) -> str:
    """The first raw word of `text` (no leading IFS), "" for an empty text: `split_words`' first,
    without splitting the rest unless that word holds a quote or a backslash."""
    end = len(text)
    for blank in IFS:
        at = text.find(blank, 0, end)
        if at >= 0:
            end = at
    word = text[:end]  # "" when `text` starts with a blank
    if "'" not in word and '"' not in word and "\\" not in word:  # it ends at the first blank
        return word
    return split_words(text)[0][0]


def _golangci_run_part(words: list[tuple[str, int]]) -> str:
    """" run …" when only global options precede `run`, else ""."""
    i = 1
    while i < len(words):
        value = word_value(words[i][0])
        if value == "run":
            return " " + " ".join(w for w, _ in words[i:])
        if not value.startswith("-") or value == "--":
            return ""
        if value in _GOLANGCI_VALUE_OPTS:
            i += 1
        i += 1
    return ""


@lru_cache(maxsize=1024)
def rtk_php_tool(text: str) -> str:
    """Reduce PHP tool spellings to the tool name: `php vendor/bin/phpunit` → `phpunit`,
    `./vendor/bin/pint` → `pint`, `./bin/phpunit` → `bin/phpunit` (only `./` and `vendor/bin/`
    or a composer bin dir are dropped; `php` only in front of phpunit/phpstan)."""
    text = collapse_continuations(text).strip(IFS)
    words = split_words(text)
    if not words:
        return text
    first, _ = words[0]
    if first == "php" and len(words) > 1:
        tool = _reduce_php_path(words[1][0])
        if tool.rsplit("/", 1)[-1] in ("phpunit", "phpstan"):
            return tool + text[words[1][1] + len(words[1][0]) :]
        return text
    return _reduce_php_path(first) + text[len(first) :]


def _reduce_php_path(word: str) -> str:
    if word.startswith("./"):
        word = word[2:]
    for bin_dir in ("vendor/bin/", "tools/bin/"):
        if word.startswith(bin_dir):
            return word[len(bin_dir) :]
    return word


# ---------------------------------------------------------------------------------------------
# prefix replacement (§3.5 step 11)


def rtk_replace_prefix(text: str, prefixes: list[str], rtk_cmd: str) -> str:
    """Replace the longest of `prefixes` that starts `text` at a word boundary by `rtk_cmd`; the
    rest follows after one space, its leading whitespace trimmed. `text` unchanged when none
    matches."""
    text = trim_ifs(collapse_continuations(text))
    for prefix in sorted(prefixes, key=len, reverse=True):
        if not text.startswith(prefix):
            continue
        rest = text[len(prefix) :]
        if rest and rest[0] not in IFS:
            continue
        rest = rest.lstrip(IFS)
        return f"{rtk_cmd} {rest}" if rest else rtk_cmd
    return text


@lru_cache(maxsize=1024)
def rtk_prefixed(text: str) -> str:
    """`rtk <text>` with the text as typed (continuations collapsed): the TOML-filter fallback."""
    return "rtk " + trim_ifs(collapse_continuations(text))


#: The JS runner words RTK consumes in front of a tool (`npx tsc` → `rtk tsc`), reference §3.9
#: "JSR".
JS_RUNNERS = (
    "npm exec", "npm rum", "npm run", "npm run-script", "npm urn", "npm x", "npm", "npx",
    "pnpm dlx", "pnpm exec", "pnpm run", "pnpm run-script", "pnpm", "pnpx",
)  # fmt: skip


def rtk_runner_prefixes(tools: list[str]) -> list[str]:
    """Every `tools` entry alone and behind each JS runner (`jest` → `npx jest`, `pnpm exec jest`,
    …)."""
    return [*tools, *(f"{runner} {tool}" for runner in JS_RUNNERS for tool in tools)]


# ---------------------------------------------------------------------------------------------
# routable `uv run` (§3.5 step 4)


def _uv_run_layers(prefix: str, transparent: list[str]) -> list[tuple[int, bool]]:
    """Offsets in `prefix` of each built-in `uv run` layer, with whether options follow `run`."""
    words = split_words(prefix)
    prefixes = sorted(
        (split_words(p.strip()) for p in transparent if p.strip()), key=len, reverse=True
    )
    layers: list[tuple[int, bool]] = []
    i = 0
    while i < len(words):
        for pre in prefixes:
            if [w for w, _ in words[i : i + len(pre)]] == [w for w, _ in pre]:
                i += len(pre)
                break
        else:
            uv_run = i + 1 < len(words) and word_value(words[i + 1][0]) == "run"
            if word_value(words[i][0]) == "uv" and uv_run:
                if _refused_uv_run(words, i + 2):
                    break  # FOO=1 after `uv run`: that layer (and all it wraps) is refused
                options = i + 2 < len(words) and word_value(words[i + 2][0]).startswith("-")
                layers.append((words[i][1], options))
                i += 2
            else:
                i += 1
    return layers


def _refused_uv_run(words: list[tuple[str, int]], k: int) -> bool:
    """True when word `k` is an assignment right after `uv run` (a refused layer, §3.5 step 4)."""
    return (
        2 <= k < len(words)
        and assignment_name(words[k][0]) is not None
        and [word_value(w) for w, _ in words[k - 2 : k]] == ["uv", "run"]
    )


def _uv_fallback(prefix: str, command: str, offset: int, excluded: list[str]) -> str:
    """`rtk ` inserted before the `uv run` at `offset`, "" when a wrapped layer is excluded."""
    wrapped = trim_ifs(collapse_continuations(prefix[offset:] + command))
    words = split_words(wrapped)
    for k, (_, start) in enumerate(words[2:] if excluded else (), 2):
        if _refused_uv_run(words, k):
            break  # reading through the layers stops at a refused `uv run` layer
        tail = wrapped[start:]
        if rtk_excluded(tail, [word_value(w) for w, _ in split_words(tail)], excluded):
            return ""
    if excluded and rtk_excluded(wrapped, [word_value(w) for w, _ in words], excluded):
        return ""
    return prefix[:offset] + "rtk " + wrapped


def rtk_uv_run_options(
    prefix: str, command: str, transparent: list[str], excluded: list[str]
) -> str:
    """`uv run` followed by options goes whole to `rtk uv run` (`uv run -- cargo test`); ""
    otherwise."""
    for offset, options in _uv_run_layers(prefix, transparent):
        if options:
            if _unreadable_options(prefix[offset:] + command, excluded):
                return ""
            return _uv_fallback(prefix, command, offset, excluded)
    return ""


def _unreadable_options(wrapped: str, excluded: list[str]) -> bool:
    """Under an exclusion list, options after `uv run` other than a lone `--` hide the command
    they run from the exclusion check, so RTK leaves it alone (`uv run --with x pytest`)."""
    if not any(_exclude_matcher(entry) is not None for entry in excluded):
        return False
    words = [word_value(w) for w, _ in split_words(wrapped)]
    lone_double_dash = len(words) > 3 and words[2] == "--" and not words[3].startswith("-")
    return not lone_double_dash


def rtk_uv_run_has_options(prefix: str, transparent: list[str]) -> bool:
    """True when a built-in `uv run` layer of `prefix` is followed by options."""
    return any(options for _, options in _uv_run_layers(prefix, transparent))


def rtk_uv_run_fallback(
    prefix: str, command: str, transparent: list[str], excluded: list[str]
) -> str:
    """The innermost `uv run` layer routed to `rtk uv run …` when nothing inside it rewrites."""
    layers = _uv_run_layers(prefix, transparent)
    return _uv_fallback(prefix, command, layers[-1][0], excluded) if layers else ""


# ---------------------------------------------------------------------------------------------
# exclude_commands (§3.7)


@lru_cache(maxsize=256)
def _exclude_matcher(entry: str) -> Callable[[str], object] | None:
    """An entry as a test of a command form (truthy when it matches): a word prefix (an entry
    without `^`: it, then the end or a blank), a regex matched at the start (an entry with `^`),
    or a literal prefix (an invalid regex); None for an ignored entry. Only a `^` entry imports
    `re`: the usual entries (`curl`, `playwright`) leave it out of a cold hook."""
    trimmed = entry.strip()
    if not trimmed or trimmed == "^":
        return None
    if not trimmed.startswith("^"):
        return partial(_starts_with_word, trimmed)
    import re  # only for a config's `^` entries

    try:
        return re.compile(trimmed).match
    except re.error:
        return partial(_starts_with, trimmed)


#: what may follow a word-prefix entry: the end, or a blank
_WORD_ENDS = ("", " ", "\t", "\n")


def _starts_with_word(prefix: str, form: str) -> bool:
    """`re.match(re.escape(prefix) + "(?:$|[ \\t\\n])", form)`: `form` starts with `prefix`,
    then ends or goes on with a blank (`$` before a final newline is that newline: a blank)."""
    return form.startswith(prefix) and form[len(prefix) : len(prefix) + 1] in _WORD_ENDS


def _starts_with(prefix: str, form: str) -> bool:
    return form.startswith(prefix)


_RUNNERS = (
    ("npm", "exec"), ("npm", "run"), ("npm", "run-script"), ("npm", "x"), ("pnpm", "exec"),
    ("pnpm", "dlx"), ("pnpm", "run"), ("bundle", "exec"), ("yarn", "dlx"), ("yarn", "exec"),
)  # fmt: skip
_SINGLE_RUNNERS = frozenset({"npx", "pnpx", "bunx"})


def rtk_tool_form(argv: list[str]) -> str:
    """The tool peeled from runner/interpreter spellings: `npx eslint .` → `eslint .`,
    `python -m pytest` → `pytest`, `vendor/bin/phpunit` → `phpunit`, `./gradlew` → `gradlew`."""
    words = list(argv)
    if not words:
        return ""
    head = words[0].rsplit("/", 1)[-1]
    if head in _SINGLE_RUNNERS and len(words) > 1:
        words = words[1:]
    elif len(words) > 2 and (head, words[1]) in _RUNNERS:
        words = words[2:]
    elif versioned(head, "python") and len(words) > 2 and words[1] == "-m":
        words = words[2:]
    elif head == "php" and len(words) > 1:
        words = words[1:]
    words[0] = words[0].rsplit("/", 1)[-1]
    return " ".join(words)


#: besides letters, digits and `_` (`\\w`), the characters a word keeps unescaped
_PLAIN_MARKS = frozenset("_-./=:@%+,^~")


def _plain(text: str) -> bool:
    """`re.fullmatch(r"[\\w\\-./=:@%+,^~]*", text)`: every character is a word character
    (`str.isalnum()` or `_`: what `\\w` is on str) or one of `_PLAIN_MARKS`."""
    return all(c.isalnum() or c in _PLAIN_MARKS for c in text)


def _escaped(word: str) -> str:
    """A dequoted word written back for bash with backslash escapes (`a b` → `a\\ b`)."""
    if _plain(word):
        return word
    return "".join(c if _plain(c) else "\\" + c for c in word)


def rtk_excluded(text: str, argv: list[str], entries: list[str]) -> bool:
    """True when an `exclude_commands` entry matches the command as typed, its basename form,
    its dequoted words, or its tool form. `text` is the command without trailing redirects."""
    if not entries:  # the usual configuration: nothing excluded, nothing to read
        return False
    matchers = [m for m in (_exclude_matcher(e) for e in entries) if m is not None]
    if not matchers:
        return False
    typed = collapse_continuations(text).strip(IFS)
    words = split_words(typed)
    forms = [typed]
    if words and "/" in words[0][0]:
        forms.append(words[0][0].rsplit("/", 1)[-1] + typed[len(words[0][0]) :])
    words_run = [_escaped(w) for w in argv]  # a quoted word never splits (`'pytest x'` ≠ `pytest`)
    if words_run:
        forms.append(" ".join(words_run))
        forms.append(" ".join([words_run[0].rsplit("/", 1)[-1], *words_run[1:]]))
        forms.append(rtk_tool_form(words_run))
    return any(matches(f) for matches in matchers for f in forms if f)


_S, _B, _LS = "string", "bool", "list<string>"

#: The functions of this module (see rtk_policy.policy.functions for the mechanism).
FUNCTIONS: tuple[Function, ...] = (
    Function("rtk_norm", (_S,), _S, rtk_norm),
    Function("rtk_php_tool", (_S,), _S, rtk_php_tool),
    Function("rtk_replace_prefix", (_S, _LS, _S), _S, rtk_replace_prefix),
    Function("rtk_prefixed", (_S,), _S, rtk_prefixed),
    Function("rtk_excluded", (_S, _LS, _LS), _B, rtk_excluded),
    Function("rtk_runner_prefixes", (_LS,), _LS, rtk_runner_prefixes),
    Function("rtk_uv_run_has_options", (_S, _LS), _B, rtk_uv_run_has_options),
    Function("rtk_uv_run_options", (_S, _S, _LS, _LS), _S, rtk_uv_run_options),
    Function("rtk_uv_run_fallback", (_S, _S, _LS, _LS), _S, rtk_uv_run_fallback),
    Function("rtk_tool_form", (_LS,), _S, rtk_tool_form),
)
