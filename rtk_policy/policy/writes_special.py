"""The entries of `writes.WRITERS` that a plain field cannot say: each takes the command's words and
their `writes.Args` and gives the words written, each with whether it is a whole tree."""

from __future__ import annotations

from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.policy.writes import Args

Written = list[tuple[str, bool]]
_CHMOD_MODE = lazy(globals(), "_CHMOD_MODE", r"[-+=][rwxXstugo]*\Z")
_CHATTR_MODE = lazy(globals(), "_CHATTR_MODE", r"[-+=][a-zA-Z]+\Z")


def _read(words: tuple[str, ...], short: str = "", long: tuple[str, ...] = ()) -> Args:
    from rtk_policy.policy.writes import read_args

    return read_args(words, short, long)


def dd(words: tuple[str, ...], args: Args) -> Written:
    """`dd of=FILE`."""
    return [(w[3:], False) for w in words if w.startswith("of=")]


def editor_files(words: tuple[str, ...], args: Args) -> Written:
    """The files an editor opens (and may write in batch mode: `vim -c wq`, `ed`, `emacs --batch`),
    without `+cmd` arguments."""
    return [(w, False) for w in args.operands if not w.startswith("+")]


def sed_files(words: tuple[str, ...], args: Args) -> Written:
    """`sed -i`: the files after the script (all operands with `-e`/`-f`; BSD's `-i ''` skipped)."""
    operands = list(args.operands)
    if operands and operands[0] == "":
        operands.pop(0)
    if not args.has("e", "f", "expression", "file"):
        operands = operands[1:]
    return [(w, False) for w in operands]


def perl_files(words: tuple[str, ...], args: Args) -> Written:
    """`perl -i` / `ruby -i` (also in a cluster: `-pi.bak`): the files after the script."""
    if not any(w.startswith("-") and not w.startswith("--") and "i" in w for w in words):
        return []
    operands = list(args.operands)
    return [(w, False) for w in (operands if args.has("e", "E") else operands[1:])]


def awk_inplace(words: tuple[str, ...], args: Args) -> Written:
    """`gawk -i inplace`: the files after the program."""
    if "inplace" not in args.value("i"):
        return []
    operands = list(args.operands)
    return [(w, False) for w in (operands if args.has("f") else operands[1:])]


def sd_files(words: tuple[str, ...], args: Args) -> Written:
    """`sd FIND REPLACE FILE...` edits the files in place (unless it previews, `-p`)."""
    return [] if args.has("p", "preview") else [(w, False) for w in args.operands[2:]]


def patch(words: tuple[str, ...], args: Args) -> Written:
    """`patch [FILE]`, `-o OUT`, `-d DIR`: with no file, the files the patch names in its folder."""
    args = _read(words, "oidpBDFrVYz", ("output", "input", "directory", "strip", "reject-file"))
    found: Written = [(w, False) for w in args.value("o", "output")]
    folders = args.value("d", "directory") or ["."]
    if args.operands:
        found.append((args.operands[0], False))
    elif not found:
        found += [(folder, True) for folder in folders]
    return found


def tar(words: tuple[str, ...], args: Args) -> Written:
    """`tar -x` writes into `-C DIR` (or the working folder; anywhere with `-P`); `-c`/`-r`/`-u`
    write the archive `-f FILE`. The old form `tar xzf a.tgz` is read too."""
    if words and not words[0].startswith("-") and words[0].isalpha():
        words = ("-" + words[0], *words[1:])
    args = _read(words, "fCTXbKNVgIHL", ("file", "directory", "files-from", "exclude-from",
                 "exclude", "listed-incremental", "use-compress-program", "format",
                 "transform"))  # fmt: skip
    found: Written = [(w, False) for w in args.value("g", "listed-incremental")]
    if args.has("x", "extract", "get"):
        if args.has("P", "absolute-names"):
            return [*found, ("/", True)]
        return [*found, *((d, True) for d in args.value("C", "directory") or ["."])]
    if args.has("c", "create", "r", "append", "u", "update", "A", "catenate"):
        found += [(w, False) for w in args.value("f", "file") if w != "-"]
    return found


def seven_zip(words: tuple[str, ...], args: Args) -> Written:
    """`7z x|e ARCHIVE -oDIR` (or into the working folder); `7z a ARCHIVE` writes the archive."""
    if not args.operands:
        return []
    command = args.operands[0]
    if command in ("x", "e"):
        return [(d, True) for d in args.value("o") or ["."]]
    if command in ("a", "u", "d", "rn") and len(args.operands) > 1:
        return [(args.operands[1], False)]
    return []


def cpio(words: tuple[str, ...], args: Args) -> Written:
    """`cpio -i` unpacks into `-D DIR` (or the working folder); `-O FILE` writes an archive."""
    args = _read(words, "DOIEFHMRC", ("directory", "file", "format", "pattern-file"))
    found: Written = [(w, False) for w in args.value("O")]
    if args.has("i", "extract"):
        found += [(d, True) for d in args.value("D", "directory") or ["."]]
    return found


def _url_name(url: str) -> str:
    """The file name a download of `url` is saved as (the last part of its path)."""
    path = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    return path.rstrip("/").rsplit("/", 1)[-1] if "/" in path else ""


_CURL_SHORT = "AbcCdDeEFHKmoPQrtTuUwxXyYz"
_CURL_LONG = ("data", "data-binary", "data-raw", "data-urlencode", "header", "request", "user",
              "user-agent", "referer", "cert", "config", "range", "upload-file", "write-out",
              "max-time", "continue-at", "cookie", "cookie-jar", "dump-header", "form", "output",
              "proxy", "url", "output-dir", "connect-timeout", "retry", "trace", "trace-ascii",
              "stderr", "etag-save", "etag-compare", "cacert", "key", "resolve",
              "json")  # fmt: skip


def curl(words: tuple[str, ...], args: Args) -> Written:
    """`curl -o FILE`, `-O` (the URL's file name, in `--output-dir` or the working folder), `-J`
    (a name the server picks: the whole folder), and the files it writes besides (cookie jar,
    dumped headers, traces)."""
    args = _read(words, _CURL_SHORT, _CURL_LONG)
    outputs = ("o", "output", "c", "cookie-jar", "D", "dump-header", "trace", "trace-ascii",
               "stderr", "etag-save")  # fmt: skip
    found: Written = [(w, False) for w in args.value(*outputs) if w != "-"]
    folder = (args.value("output-dir") or ["."])[-1]
    urls = [*args.operands, *args.value("url")]
    if args.has("J", "remote-header-name"):
        found.append((folder, True))
    elif args.has("O", "remote-name", "remote-name-all"):
        found += [(f"{folder}/{name}", False) for url in urls if (name := _url_name(url))]
    return found


def wget(words: tuple[str, ...], args: Args) -> Written:
    """`wget URL` saves the URL's file name in `-P DIR` (or the working folder), `-O FILE` instead;
    `-r`/`-m` a whole tree there; `-o`/`-a` write a log."""
    args = _read(words, "OoaPeUtTwiBQlARDIX", ("output-document", "output-file", "append-output",
                 "directory-prefix", "execute", "user-agent", "tries", "timeout", "wait",
                 "input-file", "base", "quota", "level", "accept", "reject", "domains", "user",
                 "password"))  # fmt: skip
    found: Written = [(w, False) for w in args.value("o", "output-file", "a", "append-output")]
    documents = [w for w in args.value("O", "output-document") if w != "-"]
    folder = (args.value("P", "directory-prefix") or ["."])[-1]
    if args.has("r", "recursive", "m", "mirror"):
        return [*found, (folder, True)]
    if documents or args.value("O", "output-document"):
        return found + [(w, False) for w in documents]
    return found + [(f"{folder}/{name}", False) for u in args.operands if (name := _url_name(u))]


_GIT_GLOBAL_VALUES = ("C", "c")
_GIT_SUB_VALUES = {
    "clone": ("bocju", ("depth", "branch", "origin", "reference", "separate-git-dir", "template",
                        "config", "jobs", "filter", "upload-pack", "shallow-since",
                        "shallow-exclude")),
    "restore": ("s", ("source", "pathspec-from-file")),
    "config": ("f", ("file", "blob", "type", "default")),
}  # fmt: skip


#: the git subcommands `git` reads written paths from
_GIT_WRITES = frozenset({"clone", "rm", "mv", "restore", "checkout", "config"})


def git(words: tuple[str, ...], args: Args) -> Written:
    """`git clone URL [DIR]`, `git rm|mv|restore PATH…`, `git checkout … -- PATH…`,
    `git config -f FILE`; relative paths under `git -C DIR`."""
    base, at = "", 0
    while at < len(words) and words[at].startswith("-"):
        word = words[at]
        at += 1
        if word in ("-C", "-c") and at < len(words):
            if word == "-C":
                base = words[at] if words[at].startswith("/") or not base else f"{base}/{words[at]}"
            at += 1
    if at >= len(words):
        return []
    sub, rest = words[at], words[at + 1 :]
    if sub not in _GIT_WRITES:  # status, log, diff, commit…: nothing named is written
        return []
    short, long = _GIT_SUB_VALUES.get(sub, ("", ()))
    sub_args = _read(rest, short, long)
    found: Written = []
    if sub == "clone" and sub_args.operands:
        url = sub_args.operands[0]
        target = sub_args.operands[1] if len(sub_args.operands) > 1 else _url_name(url)
        found.append((target.removesuffix(".git") if len(sub_args.operands) == 1 else target, True))
    elif sub in ("rm", "mv"):
        found += [(w, True) for w in sub_args.operands]
    elif sub == "restore":
        found += [(w, False) for w in sub_args.operands]
    elif sub == "checkout" and "--" in rest:
        found += [(w, False) for w in rest[rest.index("--") + 1 :]]
    elif sub == "config":
        found += [(w, False) for w in sub_args.value("f", "file")]
    if base:
        found = [(w if w.startswith(("/", "~")) else f"{base}/{w}", tree) for w, tree in found]
    return found


_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "xargs", "env", "sudo"})
_FIND_OUTPUTS = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


def find(words: tuple[str, ...], args: Args) -> Written:
    """`find PATH… -delete` (or `-exec`/`-ok` of a program that writes, or of a shell) may change
    everything under its start paths; `-fprint FILE` writes FILE."""
    from rtk_policy.policy.writes import WRITERS

    starts = []
    for word in words:
        if word.startswith(("-", "(", "!", ")")) or word == ",":
            break
        starts.append(word)
    found: Written = [(words[i + 1], False) for i, w in enumerate(words[:-1]) if w in _FIND_OUTPUTS]
    runs = [words[i + 1].rsplit("/", 1)[-1] for i, w in enumerate(words[:-1]) if w in _FIND_RUNS]
    if "-delete" in words or any(p in WRITERS or p in _SHELLS for p in runs):
        found += [(start, True) for start in starts or ["."]]
    return found


def copy_links(words: tuple[str, ...], args: Args) -> Written:
    """`cp -s`/`cp -l` link the sources, which makes them writable through the links."""
    if not args.has("s", "l", "symbolic-link", "link"):
        return []
    operands = args.operands if args.value("t", "target-directory") else args.operands[:-1]
    return [(w, True) for w in operands]


def install_dirs(words: tuple[str, ...], args: Args) -> Written:
    """`install -d DIR…` creates every operand (the destination rule does not apply)."""
    return [(w, False) for w in args.operands[:-1]] if args.has("d", "directory") else []


def after_mode(words: tuple[str, ...], args: Args) -> Written:
    """`chmod MODE FILE…`, `chown OWNER FILE…`: every operand after the mode (all of them with
    `--reference` or a mode written like an option, `chmod -w FILE`)."""
    tree = args.has("R", "recursive")
    mode_as_flag = any(_CHMOD_MODE.match(w) and w not in ("-R", "-v", "-c", "-f") for w in words)
    operands = args.operands if args.has("reference") or mode_as_flag else args.operands[1:]
    return [(w, tree) for w in operands]


def chattr(words: tuple[str, ...], args: Args) -> Written:
    """`chattr [-+=]ATTRS FILE…`: every word that is neither an option nor the attributes."""
    tree = "-R" in words
    skip, found = False, []
    for word in words:
        if skip:
            skip = False
        elif word in ("-p", "-v"):
            skip = True
        elif not (word in ("-R", "-V", "-f") or _CHATTR_MODE.match(word)):
            found.append((word, tree))
    return found
