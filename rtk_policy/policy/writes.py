"""What a shell command writes: per program, which of its arguments name the files it changes.

`WRITERS` is the one table of that knowledge. `segment_writes(segment)` gives the words a segment
writes, each with whether it changes a whole tree (`rm -r`, `mv`, `ln`, `tar -x -C`): redirect
targets, then what the program's entry reads from its arguments. The words are as the shell stage
left them (dequoted, `~` and `$VAR` not yet expanded): `shell_paths.py` turns them into paths.
"""

from __future__ import annotations

from rtk_policy.policy import writes_special as special
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rtk_policy.shell.model import Segment

#: redirect operators that write their target
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})


@record.frozen(compile_after=record.PER_COMMAND)
class Args:
    """A command's arguments sorted out: operands, option values by name, flags given."""

    operands: tuple[str, ...]
    values: tuple[tuple[str, str], ...]  #: (option name, value): short letter or long name
    flags: frozenset[str]  #: short letters and long names given without a value

    def value(self, *names: str) -> list[str]:
        """The values given to any of the options `names`."""
        return [value for name, value in self.values if name in names]

    def has(self, *names: str) -> bool:
        """Whether any of the options `names` was given (with or without a value)."""
        return not self.flags.isdisjoint(names) or any(n in names for n, _ in self.values)


def read_args(
    args: tuple[str, ...], short_values: str = "", long_values: tuple[str, ...] = ()
) -> Args:
    """Sort `args` out: `-abc` clusters (a letter of `short_values` takes the rest or the next
    argument), `--name=value` or `--name value` (names in `long_values`), `--` ending options."""
    operands: list[str] = []
    values: list[tuple[str, str]] = []
    flags: set[str] = set()
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        if word == "--":
            operands.extend(args[at:])
            break
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            if equals:
                values.append((name, value))
            elif name in long_values and at < len(args):
                values.append((name, args[at]))
                at += 1
            else:
                flags.add(name)
        elif word.startswith("-") and len(word) > 1:
            for index, letter in enumerate(word[1:], 1):
                if letter in short_values:
                    rest = word[index + 1 :]
                    if not rest and at < len(args):
                        rest, at = args[at], at + 1
                    values.append((letter, rest))
                    break
                flags.add(letter)
        else:
            operands.append(word)
    return Args(tuple(operands), tuple(values), frozenset(flags))


@record.frozen
class Writer:
    """What one program writes, read from its arguments (the fields combine)."""

    targets: str = (
        "all"  #: operands written: "all", "last" (a destination), "rest" (not the first), "none"
    )
    tree: bool = False  #: the targets are whole trees (mv, ln)
    tree_when: tuple[str, ...] = ()  #: options that make them trees (rm -r)
    needs: tuple[str, ...] = ()  #: options without which it writes nothing (sed -i)
    short_values: str = ""  #: short options that take a value
    long_values: tuple[str, ...] = ()  #: long options that take a value
    outputs: tuple[str, ...] = ()  #: options whose value is a file written (curl -o)
    folders: tuple[str, ...] = ()  #: options whose value is a folder written into (cp -t, tar -C)
    into_cwd: bool = False  #: with no folder option, writes into the working folder (tar -x)
    copies: bool = False  #: the destination is a folder too: `dest/<source name>` is written
    reads_only: tuple[str, ...] = ()  #: options under which it writes nothing (gzip -c)
    special: Callable[[tuple[str, ...], Args], list[tuple[str, bool]]] | None = None  #: by hand
    #: a tree target's entries are each changed too (`rm -r /tmp` deletes every entry of /tmp,
    #: as `rm -r /tmp/*` does, though a tree written into a shared temp folder holds none of them)
    entries: bool = False
    #: the special reads the words itself: the table's fields are the defaults, no `Args` are
    #: worked out for it (`by_words`)
    own_args: bool = False


def by_words(special: Callable[[tuple[str, ...], Args], list[tuple[str, bool]]]) -> Writer:
    """The entry of a program whose `special` alone reads its words (it ignores its `Args`)."""
    return Writer(targets="none", special=special, own_args=True)


#: the `Args` a special of `by_words` is given
NO_ARGS = Args((), (), frozenset())


def _targets(words: tuple[str, ...], spec: Writer) -> list[tuple[str, bool]]:
    """The words `spec` says a command with arguments `words` writes, each with whether it is a
    tree."""
    if spec.own_args and spec.special is not None:
        return spec.special(words, NO_ARGS)
    args = read_args(words, spec.short_values, spec.long_values)
    if (spec.needs and not args.has(*spec.needs)) or (
        spec.reads_only and args.has(*spec.reads_only)
    ):
        return []
    tree = spec.tree or args.has(*spec.tree_when)
    found = [(value, False) for value in args.value(*spec.outputs)]
    folders = args.value(*spec.folders)
    found += [(folder, True) for folder in folders]
    operands = list(args.operands)
    if spec.targets == "last" and not folders:
        if len(operands) > (1 if spec.copies else 0) and not _remote(operands[-1]):
            destination = operands[-1]
            found.append((destination, tree))
            if spec.copies:
                found += [(_inside(destination, s), tree) for s in operands[:-1]]
    elif spec.targets == "last":
        found += [(_inside(f, s), tree) for f in folders for s in operands]
    elif spec.targets == "all":
        found += [(word, tree) for word in operands]
        if tree and spec.entries:
            found += [(f"{word.rstrip('/')}/*", True) for word in operands if word.strip("/")]
    elif spec.targets == "rest":
        found += [(word, tree) for word in operands[1:]]
    if spec.into_cwd and not folders:
        found.append((".", True))
    if spec.special is not None:
        found += spec.special(words, args)
    return found


def _remote(word: str) -> bool:
    """Whether a destination names another host (`host:path`, as scp and rsync take it)."""
    head = word.split("/", 1)[0]
    return ":" in head and not head.startswith(".")


def _inside(folder: str, source: str) -> str:
    """`folder/<last part of source>` (what `cp source folder/` writes)."""
    name = source.rstrip("/").rsplit("/", 1)[-1]
    return f"{folder.rstrip('/')}/{name}" if name else folder


def segment_writes(segment: Segment) -> list[tuple[str, bool]]:
    """The words `segment` writes, each with whether it changes a whole tree."""
    found = [
        (r.target, False)
        for r in segment.redirects
        if r.is_file and r.op in WRITE_REDIRECTS and r.target and not r.target.startswith("&")
    ]
    spec = WRITERS.get(segment.program)
    if spec is not None:
        found += _targets(segment.args, spec)
    return found


_MODE = "mZ"
_COPY: dict[str, Any] = dict(
    short_values="tS", long_values=("target-directory", "suffix"), folders=("t", "target-directory")
)
_VIM: dict[str, Any] = dict(short_values="cSuUiTwWsqt", long_values=("cmd",), outputs=("w", "W"),
                            targets="none", special=special.editor_files)  # fmt: skip
_COMPRESS = Writer(reads_only=("c", "stdout", "to-stdout", "t", "test", "l", "list", "k", "keep"))
_SED = Writer(needs=("i", "in-place"), short_values="efl", long_values=("expression", "file"),
              targets="none", special=special.sed_files)  # fmt: skip
_PERL = Writer(short_values="eEIMm", targets="none", special=special.perl_files)
_TAR = by_words(special.tar)
_SEVEN = Writer(targets="none", short_values="o", special=special.seven_zip)
_ARGS_AFTER_MODE = Writer(targets="none", tree_when=("R", "recursive"), special=special.after_mode)

#: What each program writes (by the program's name after unwrapping, as `segment.program`).
WRITERS: dict[str, Writer] = {
    # deleting, creating, truncating
    "rm": Writer(tree_when=("r", "R", "recursive"), entries=True),
    "unlink": Writer(),
    "rmdir": Writer(),
    "shred": Writer(short_values="ns", long_values=("iterations", "size", "random-source")),
    "touch": Writer(short_values="drt", long_values=("date", "reference", "time")),
    "truncate": Writer(short_values="sr", long_values=("size", "reference")),
    "mkdir": Writer(short_values=_MODE, long_values=("mode", "context")),
    "mkfifo": Writer(short_values=_MODE, long_values=("mode", "context")),
    "tee": Writer(),
    "sponge": Writer(),
    "dd": by_words(special.dd),
    "gzip": _COMPRESS, "gunzip": _COMPRESS, "bzip2": _COMPRESS, "bunzip2": _COMPRESS,
    "xz": _COMPRESS, "unxz": _COMPRESS, "lzma": _COMPRESS,
    # copying, moving, linking (a link's name and what it points to are both changed by it)
    "cp": Writer(targets="last", copies=True, tree_when=("r", "R", "a", "recursive", "archive"),
                 special=special.copy_links, **_COPY),
    "mv": Writer(tree=True, **_COPY),
    "ln": Writer(tree=True, **_COPY),
    "install": Writer(targets="last", copies=True, short_values="gmoSt",
                      special=special.install_dirs,
                      long_values=("group", "mode", "owner", "suffix", "target-directory"),
                      folders=("t", "target-directory")),
    "rsync": Writer(targets="last", tree=True, short_values="efT",
                    long_values=("rsh", "exclude", "include", "filter", "files-from", "temp-dir",
                                 "backup-dir", "rsync-path", "chmod", "chown", "log-file")),
    "scp": Writer(targets="last", copies=True, tree_when=("r",), short_values="cFiJlmoPSD"),
    # changing modes and owners
    "chmod": _ARGS_AFTER_MODE, "chown": _ARGS_AFTER_MODE, "chgrp": _ARGS_AFTER_MODE,
    "chattr": Writer(targets="none", tree_when=("R",), short_values="pv", special=special.chattr),
    "setfacl": Writer(short_values="mMxX", tree_when=("R", "recursive"),
                      long_values=("modify", "modify-file", "remove", "remove-file", "set",
                                   "set-file")),
    # editing in place
    "sed": _SED, "gsed": _SED,
    "perl": _PERL, "ruby": _PERL,
    "awk": Writer(short_values="fvi", targets="none", special=special.awk_inplace),
    "gawk": Writer(short_values="fvi", targets="none", special=special.awk_inplace),
    "sd": Writer(targets="none", special=special.sd_files),
    "yq": Writer(needs=("i", "inplace"), targets="rest"),
    "patch": by_words(special.patch),
    "vim": Writer(**_VIM), "vi": Writer(**_VIM), "nvim": Writer(**_VIM), "ex": Writer(**_VIM),
    "view": Writer(**_VIM), "vimdiff": Writer(**_VIM),
    "ed": Writer(short_values="p", targets="none", special=special.editor_files),
    "red": Writer(short_values="p", targets="none", special=special.editor_files),
    "emacs": Writer(short_values="lfL", targets="none", special=special.editor_files,
                    long_values=("eval", "load", "funcall", "directory", "chdir", "insert")),
    "nano": Writer(targets="none", special=special.editor_files, short_values="oQTYrs"),
    "micro": Writer(targets="none", special=special.editor_files),
    # unpacking, downloading, cloning
    "tar": _TAR, "gtar": _TAR, "bsdtar": _TAR,
    "unzip": Writer(targets="none", folders=("d",), into_cwd=True, short_values="dx",
                    reads_only=("l", "t", "v", "Z", "p", "c", "z")),
    "7z": _SEVEN, "7za": _SEVEN, "7zz": _SEVEN,
    "cpio": by_words(special.cpio),
    "curl": by_words(special.curl),
    "wget": by_words(special.wget),
    "git": by_words(special.git),
    "find": by_words(special.find),
}  # fmt: skip
