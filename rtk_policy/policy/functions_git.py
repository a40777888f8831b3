"""CEL functions that read git's command lines as git reads them.

- `git_push_branches(args)`: the branches `git … push ARGS` (the words after `git`) updates on the
  remote, as the command itself names them: each refspec's destination (`main`, `HEAD:main`,
  `+refs/heads/main`, `feature:main`), a `--force-with-lease=main…` refname, `*` for
  `--all`/`--branches`/`--mirror`, and `HEAD` when it pushes the checked-out branch (no refspec, or
  `HEAD` as one), which the command line does not name. Option values (`--repo R`, `-o X`,
  `--receive-pack P`) are not read as refspecs.

Only the words are read, never the repository: a decision depends on the command and the policies
alone, so the server's and the batch's memos of answers stay right.
"""

from __future__ import annotations

from rtk_policy.policy.functions import Function

#: git push's options that take their value as the next word (unless given with `=`)
_PUSH_VALUES = frozenset({"--repo", "--receive-pack", "--exec", "--push-option", "-o"})
#: git push's options that push every branch
_PUSH_ALL = frozenset({"--all", "--branches", "--mirror"})
_HEADS = "refs/heads/"


def _branch(ref: str) -> str:
    """The branch a ref names (`refs/heads/main` and `main` are `main`)."""
    return ref[len(_HEADS) :] if ref.startswith(_HEADS) else ref


def _destination(refspec: str) -> str:
    """The remote branch a refspec `[+]SRC[:DST]` updates (DST, else SRC)."""
    source, _, target = refspec.lstrip("+").partition(":")
    return _branch(target or source)


def git_push_branches(args: list[str]) -> list[str]:
    """The remote branches `git … push ARGS` updates, as its words name them (module docstring);
    [] when the words hold no `push`."""
    if "push" not in args:
        return []
    words = args[args.index("push") + 1 :]
    found: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(words):
        word, i = words[i], i + 1
        if word == "--":
            positional += words[i:]
            break
        if word in _PUSH_ALL:
            found.append("*")
        elif word.startswith("--force-with-lease="):
            found.append(_branch(word.split("=", 1)[1].partition(":")[0]))
        elif word in _PUSH_VALUES:
            i += 1
        elif not word.startswith("-") or word == "-":
            positional.append(word)
    refspecs = positional[1:]
    found += [_destination(refspec) for refspec in refspecs if refspec.lstrip("+")]
    if not refspecs and "*" not in found:
        found.append("HEAD")
    return found


FUNCTIONS: tuple[Function, ...] = (
    Function("git_push_branches", ("list<string>",), "list<string>", git_push_branches),
)
