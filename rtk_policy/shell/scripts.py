"""Scripts handed to interpreters: the code of `python -c`, `node -e`, `ruby -e`, `perl -e`,
`php -r`, an `awk` program, or a script fed on stdin (heredoc, here-string) to one of them.

`script_of` finds the code; `actions` reads it, per language, for what the policies judge as
shell commands: the shell commands it spawns (`os.system("…")`, `execSync('…')`, `system "…"`,
backticks), the argument lists it runs (`subprocess.run(["rm", "-rf", "/"])`), the files it
deletes (`shutil.rmtree('/')` reads as `rm -rf /`) and the files it reads while it also talks to
the network (as an upload of that file). A call whose command or path is not a literal is reported
as unknown. This is a reading of literals, not an interpreter: code that builds its strings is
only known to be unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rtk_policy.shell.words import Word
from rtk_policy.util import record
from rtk_policy.util.lazy_import import lazy_function
from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.shell.string_escapes import c_style, decode
else:  # on first use: only an interpreter's inline code needs them
    c_style = lazy_function(globals(), "c_style", "rtk_policy.shell.string_escapes")
    decode = lazy_function(globals(), "decode", "rtk_policy.shell.string_escapes")

#: language of an interpreter program name that takes no version (`node`, `gawk`)
_LANGUAGE_OF = {
    "node": "js", "nodejs": "js", "awk": "awk", "gawk": "awk", "nawk": "awk", "mawk": "awk",
    "busybox-awk": "awk",
}  # fmt: skip
#: (name, language) of the interpreters named with an optional version: `python3.12`, `perl5`
_VERSIONED_LANGUAGES = (("python", "py"), ("pypy", "py"), ("ruby", "rb"), ("perl", "pl"),
                        ("php", "php"))  # fmt: skip
#: options that hold the code, per language (the next word, or glued for short ones)
_CODE_OPTIONS = {
    "py": ("-c",), "js": ("-e", "--eval", "-p", "--print"), "rb": ("-e",), "pl": ("-e", "-E"),
    "php": ("-r",),
}  # fmt: skip
#: options that take a value which is not code, per language
_VALUED = {
    "py": ("-W", "-X", "-Q"), "js": ("-r", "--require", "--input-type", "--import", "-C"),
    "rb": ("-r", "-I", "-C", "-E"), "pl": ("-I", "-M", "-m", "-x"), "php": ("-d", "-c", "-z"),
    "awk": ("-F", "-v", "--field-separator", "--assign"),
}  # fmt: skip
_STRING = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\.)*`)"""
_SPAWN = {
    "py": r"(?:os\.(?:system|popen)|subprocess\.[a-z_]+|commands\.getoutput|pty\.spawn)",
    "js": r"(?:\bexec|\bexecSync|\bspawn|\bspawnSync|\bexecFile|\bexecFileSync)",
    "rb": r"(?:\bsystem|\bexec|\bspawn|IO\.popen|Open3\.[a-z0-9_]+|%x)",
    "pl": r"(?:\bsystem|\bexec|\bqx)",
    "php": r"(?:\bsystem|\bexec|\bshell_exec|\bpassthru|\bpopen|\bproc_open)",
    "awk": r"(?:\bsystem)",
}  # fmt: skip
#: calls that delete what their first argument names: (pattern, recursive)
_DELETE = {
    "py": ((r"shutil\.rmtree|remove_tree", True),
           (r"os\.(?:remove|unlink|rmdir|removedirs)|\.unlink|\.rmdir", False)),
    "js": ((r"(?:fs\.)?(?:promises\.)?(?:rmSync|rm|rmdirSync|rmdir)|rimraf(?:\.sync)?", True),
           (r"(?:fs\.)?(?:promises\.)?(?:unlinkSync|unlink)", False)),
    "rb": ((r"FileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rmtree)", True),
           (r"FileUtils\.(?:rm|rm_f|remove)|File\.(?:delete|unlink)", False)),
    "pl": ((r"\brmtree|\bremove_tree", True), (r"\bunlink", False)),
    "php": ((r"\brmdir", True), (r"\bunlink", False)),
    "awk": (),
}  # fmt: skip
_READ = {
    "py": r"(?:\bopen|read_text|read_bytes|Path)",
    "js": r"(?:readFileSync|readFile|createReadStream)",
    "rb": r"(?:File\.(?:read|open|binread)|IO\.read)",
    "pl": r"(?:\bopen)",
    "php": r"(?:file_get_contents|fopen|readfile)",
    "awk": r"(?:getline\s*<)",
}
_NETWORK = lazy(
    globals(),
    "_NETWORK",
    r"requests\.|urllib|http\.client|httpx|socket|\bfetch\s*\(|axios|https?\.request|XMLHttpRequest"
    r"|Net::HTTP|open-uri|LWP|HTTP::Tiny|IO::Socket|curl_exec|fsockopen|smtplib|ftplib|paramiko",
)
UNKNOWN = None  #: what an action holds when its command or path is not a literal
#: languages whose spawn calls take an argument list (`system "rm", "-rf", "/"`)
_ARGV_CALLS = frozenset({"pl", "js", "rb"})
#: how a variable starts, where a call needs no parentheses (`system $c`, `exec @argv`)
_SIGILS = {"pl": "$@", "rb": "$@", "php": "$"}
#: what ends a statement after a call's argument: a modifier (`system "ls" if ok`), an operator
_MODIFIER = r"(?:if|unless|rescue|and|or|while|until)\b|&&|\|\|"
#: a Ruby expression handed to a call without parentheses (`system cmd`, `exec ARGV[0]`,
#: `spawn *args, out: :err`), up to where the statement or the argument ends
_RUBY_VALUE = lazy(
    globals(),
    "_RUBY_VALUE",
    r"\*?[A-Za-z_]\w*(?:\[[^\]\n]*\]|\.\w+[!?]?)*(?=[ \t]*(?:$|[;\n,)}]|" + _MODIFIER + "))",
)
_STATEMENT_END = lazy(globals(), "_STATEMENT_END", r"[ \t]+(?:" + _MODIFIER + ")")


@lru_cache(maxsize=1024)  # every command asks (`runs_code`), mostly of a few program names
def language(program: str) -> str:
    """The language of an interpreter program name ("" when it is none of them)."""
    found = _LANGUAGE_OF.get(program)
    if found is not None:
        return found
    for name, found in _VERSIONED_LANGUAGES:
        if versioned(program, name):
            return found
    return ""


def versioned(program: str, name: str) -> bool:
    """Whether `program` is `name` with an optional version of digits and dots (`python3.12`)."""
    return program.startswith(name) and not program[len(name) :].strip("0123456789.")


def runs_code(program: str, words: Sequence[Word]) -> bool:
    """Whether an interpreter command holds code in its words (an awk program always does; a
    script on stdin is found by the walk, which such a command takes anyway)."""
    lang = language(program)
    if not lang:
        return False
    if lang == "awk":
        return True
    options = _CODE_OPTIONS[lang]
    return any(w.value in options or w.value[:2] in options for w in words[1:])


def script_of(lang: str, words: Sequence[Word], stdin: str | None) -> str | None:
    """The code an interpreter command runs: its code options, an awk program, or the text fed
    on stdin when it names no script file (or names `-`); None when it runs a file or module."""
    code: list[str] = []
    i, n = 1, len(words)
    options = _CODE_OPTIONS.get(lang, ())
    while i < n:
        v = words[i].value
        if v == "--" or not v.startswith("-") or v == "-":
            break
        if v in options and i + 1 < n:
            code.append(words[i + 1].value)
            i += 2
            continue
        glued = next((o for o in options if len(o) == 2 and v.startswith(o) and len(v) > 2), None)
        if glued is not None:
            code.append(v[2:])
        elif lang == "py" and v == "-m" or lang == "awk" and v in ("-f", "--file"):
            return "\n".join(code) or None  # a module or a program file runs
        i += 2 if v in _VALUED.get(lang, ()) else 1
    if code:
        return "\n".join(code)
    if lang == "awk":
        j = i + 1 if i < n and words[i].value == "--" else i
        return words[j].value if j < n else None
    rest = [w.value for w in words[i:] if w.value != "--"]
    return stdin if (not rest or rest[0] == "-") else None


@record.mutable
class Actions:
    """What a script does that the policies judge: shell command lines it spawns, argument lists
    it runs, paths it deletes (with whether recursively), files it uploads, and whether some
    spawn or delete had no literal argument."""

    shell: list[str] = record.Factory(list)
    argv: list[list[str]] = record.Factory(list)
    deletes: list[tuple[str, bool]] = record.Factory(list)
    uploads: list[str] = record.Factory(list)
    unknown_spawn: bool = False
    unknown_delete: bool = False


def actions(lang: str, code: str) -> Actions:
    """Read a script for the calls the policies judge (see the module's docstring)."""
    import re  # a cold hook deciding a plain command never reads a script

    out = Actions()
    for m in re.finditer(_SPAWN[lang] + r"\s*(\(\s*|\s+)(?=\S)", code):
        at = m.end()
        if code.startswith("[", at):  # subprocess.run(["rm", "-rf", "/"])
            listed = _list_literal(code, at, lang)
            if listed is None or not _whole(code, listed[1]):
                out.unknown_spawn = True
            else:
                out.argv.append(listed[0])
            continue
        found = _literal_at(code, at, lang)
        if found is None:  # system $c, os.system(cmd), system cmd: a command built at run time
            bare = lang in _SIGILS and code[at] in _SIGILS[lang] or code[at] in "\"`"  # "#{x}"
            bare = bare or lang == "rb" and _RUBY_VALUE.match(code, at) is not None
            out.unknown_spawn = out.unknown_spawn or "(" in m.group(1) or bare
            continue
        text, end = found
        if lang in _ARGV_CALLS and code[end:].lstrip().startswith(","):  # system("rm", "-rf", "/")
            listed = _list_literal(code, at, lang)
            if listed is None or not _whole(code, listed[1], options=True):
                out.unknown_spawn = True
            elif len(listed[0]) == 1:  # execSync("rm -rf /", {…}): a command line
                out.shell.append(text)
            else:
                out.argv.append(listed[0])
            continue
        ends = _whole(code, end) or lang in ("rb", "pl") and _STATEMENT_END.match(code, end)
        if not ends:  # 'r' + 'm -rf /', "rm " . $x, '…'.format(…), '…' % x
            out.unknown_spawn = True
            continue
        out.shell.append(text)
    if lang in ("rb", "pl", "php"):  # `…`, qx(…), %x(…) run shell commands
        spawned: list[str] = []
        for m in re.finditer(r"(?:qx|%x)([({/])", code):
            end = code.find({"(": ")", "{": "}", "/": "/"}[m.group(1)], m.end())
            if end > 0:
                spawned.append(code[m.end() : end])
        spawned += re.findall(r"`([^`\n]+)`", code)
        built = [text for text in spawned if lang == "rb" and "#{" in text]  # `#{cmd}`
        out.unknown_spawn = out.unknown_spawn or bool(built)
        out.shell.extend(c_style(text) for text in spawned if text not in built)
    if lang == "awk":  # "cmd" | getline, print … | "cmd"
        for m in re.finditer(_STRING + r"(?=\s*\|\s*getline)|\|\s*(" + _STRING + ")", code):
            found = _literal_at(code, m.start(1) if m.group(1) else m.start(), lang)
            if found is not None:
                out.shell.append(found[0])
    for pattern, recursive in _DELETE[lang]:
        call = r"\s*(?:\(\s*|\s+)" if lang == "pl" else r"\s*\(\s*"
        for m in re.finditer(r"(?<![\w$])(?:" + pattern + ")" + call, code):
            found = _literal_at(code, m.end(), lang)
            if found is None:
                out.unknown_delete = True
            else:
                deep = recursive or "recursive" in code[m.end() : m.end() + 120]
                out.deletes.append((found[0], deep))
    if _NETWORK.search(code):
        for m in re.finditer(_READ[lang] + r"\s*\(\s*", code):
            found = _literal_at(code, m.end(), lang)
            if found is not None and found[0]:
                out.uploads.append(found[0])
    return out


def _literal_at(code: str, at: int, lang: str = "") -> tuple[str, int] | None:
    """The value of the string literal that starts at `at` (its escapes decoded as `lang` does,
    `string_escapes.decode`) and the index after it (Python's r/b/u prefixes allowed; an
    f-string, a template literal with `${`, a Ruby string or backtick with `#{`, is not a
    literal); None when none."""
    j = at
    while j < len(code) and code[j] in "rRbBuU":
        j += 1
    if j >= len(code) or code[j] not in "'\"`":
        return None
    q = code[j]
    raw = "r" in code[at:j].lower()
    if code.startswith(q * 3, j):  # a Python triple-quoted string
        end = code.find(q * 3, j + 3)
        return (decode(code[j + 3 : end], lang, q, raw), end + 3) if end > 0 else None
    k = j + 1
    while k < len(code) and code[k] != q:
        if code[k] == "\\" and k + 1 < len(code):
            k += 2
            continue
        if q == "`" and code.startswith("${", k) or lang == "rb" and code.startswith("#{", k):
            return None
        k += 1
    return (decode(code[j + 1 : k], lang, q, raw), k + 1) if k < len(code) else None


def _whole(code: str, end: int, options: bool = False) -> bool:
    """Whether the argument that ends at `end` is all of it: what follows closes or separates
    (`)`, `,`, `;`, `}`, a line's end; with `options`, an options object `{`), not an operator
    that builds a string with it."""
    rest = code[end:].lstrip(" \t")
    return not rest or rest[0] in "),;}\n" or (options and rest[0] == "{")


def _list_literal(code: str, at: int, lang: str = "") -> tuple[list[str], int] | None:
    """The strings of a literal list `["a", 'b']` at `at`, or of the rest of an argument list
    (`"rm", "-rf", "/")`, perl's `system "rm", "-rf", "/";`, node's `execFileSync("rm", ["-rf"],
    {…})`: a nested list is flattened, an options object ends it), with the index after it; None
    when an item is not a string literal."""
    bracket = code.startswith("[", at)
    j = at + 1 if bracket else at
    items: list[str] = []
    while j < len(code):
        while j < len(code) and code[j] in " \t,":
            j += 1
        if j >= len(code) or code[j] in "])" or (not bracket and code[j] in ";\n{"):
            end = j + 1 if bracket and code.startswith("]", j) else j
            return (items, end) if items else None
        if code[j] == "[" and not bracket:
            inner = _list_literal(code, j, lang)
            if inner is None:
                return None
            items += inner[0]
            j = inner[1]
            continue
        found = _literal_at(code, j, lang)
        if found is None or not _whole(code, found[1]) and code[found[1] :].lstrip()[:1] != "]":
            return None
        items.append(found[0])
        j = found[1]
    return (items, j) if items and not bracket else None
