"""The shell stage's speed-ups change nothing it returns.

The fast path (`shell/plainpath.py`) gives exactly the `CommandLine` of the full tree-sitter walk:
every corpus input and thousands of generated variants are parsed both ways (the fast path switched
off by replacing `plainpath.commands` with a function that always declines) and the results must be
equal field for field, with and without transparent prefixes. The positional construction of
`Segment` / `CommandLine` gives the same values as the keyword fallback used if the models' fields
ever change.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rtk_policy.shell import assemble, draft, parse, plainpath, scan
from rtk_policy.shell.parser import Walker
from rtk_policy.shell.source import Source
from rtk_policy.shell.words import make_word

ROOT = Path(__file__).resolve().parent
REFERENCE = ROOT.parents[1] / "shared" / "reference" / "rtk_cases_public.json"
PREFIXES = ("direnv exec .", "myjail run")
VOCABULARY = (
    "git status ls -la cargo test --release npm run build rm -rf / a=b A=1 X_Y=2 ./x.sh ../y "
    "file.txt x@y %1 +x 1.2.3 a:b a,b -C /tmp sudo env timeout 5 nice -n 10 nohup command exec "
    "uv rtk -p -- xargs find . -name -exec bash -c sh eval watch su doas stdbuf -oL ionice -c3 "
    "chrt taskset 0x1 direnv myjail log -3 --oneline push --force origin main pytest -q make "
    "docker kubectl get pods cat grep -v foo head wc -l echo hi true false RTK_DISABLED=1 - "
    "--flag=value a.b_c-d busybox flock script runuser --command=ls -S -Sls split-string 1a 08 "
    "1e5 -1 1=2 x+=1 =x a==b %h --format=%h user@host pkg@1.2 let test alias source typeset "
    "if then fi do done in time coproc export local unset declare readonly function case esac "
    "2>&1 2>&1 2>&1 ~ ~/x *.py ? a* *"
).split()
CHARSET = "abcxyzAZ019_./:,+@%=-~*?"
OPS = (" && ", " || ", ";", "; ", " | ", " ; ", "&&", "||", "|", "\t&&\t", "  |  ")
NEAR = ("&", " & ", "|&", "\n", "\r", "'", '"', "$", "\\", "*", "{", "}", "(", ")", "#", "~",
        ">", "<", "2>&1", "é", "!", "[", "\t", ";;", "`")  # fmt: skip
WRAPS = ("bash -c '{}'", 'sh -c "{}"', "eval {}", "sudo {}", "env A=1 {}", "xargs {}",
         "find . -exec {} ;", "watch {}", "su -c '{}'", "time {}", "! {}", "( {} )", "{{ {}; }}",
         "echo $({})", "echo `{}`", "{} 2>&1", "{} | tee log", "direnv exec . {}",
         "myjail run {}", "{} &", "if {}; then {}; fi")  # fmt: skip


def _corpus() -> list[str]:
    out = (ROOT / "corpus" / "commands.txt").read_text(encoding="utf-8").splitlines()
    for name in ("multiline.jsonl", "bypass.jsonl"):
        for line in (ROOT / "corpus" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["command"])
    for line in (ROOT / "corpus" / "fuzz_regressions.jsonl").read_text().splitlines():
        case = json.loads(line) if line.strip() else {}
        spec = case.get("generate")
        if "command" in case:
            out.append(case["command"])
        elif spec and spec["count"] * len(spec["unit"]) <= 40_000:
            out.append(spec.get("head", "") + spec["unit"] * spec["count"] + spec.get("tail", ""))
    if REFERENCE.exists():
        data = json.loads(REFERENCE.read_text(encoding="utf-8"))
        for cases in data.values():
            for case in cases if isinstance(cases, list) else ():
                out.append(case.get("cmd"))
                out.extend(case.get("deny", []) + case.get("ask", []) + case.get("allow", []))
    return [c for c in out if isinstance(c, str)]


QUOTED_CHARS = "ab =-@%+:;&|()<>$`\\#!*?[]{}~'\"\t"


def _quoted(rng: random.Random) -> str:
    quote = rng.choice("'\"")
    body = "".join(rng.choice(QUOTED_CHARS) for _ in range(rng.randrange(0, 6)))
    return quote + body.replace(quote, "") + quote


def _word(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.2:  # quoted parts, also glued to reserved words: `for"x"` is `for "x"`
        return rng.choice(("", "", rng.choice(VOCABULARY))) + _quoted(rng) + rng.choice(("", "x"))
    if roll < 0.85:
        return rng.choice(VOCABULARY)
    return "".join(rng.choice(CHARSET) for _ in range(rng.randrange(1, 6)))


def _plain(rng: random.Random) -> str:
    commands = []
    for _ in range(rng.randrange(1, 5)):
        blank = " " if rng.random() < 0.85 else rng.choice(("  ", "\t", " \t "))
        commands.append(blank.join(_word(rng) for _ in range(rng.randrange(1, 6))))
    text = commands[0]
    for command in commands[1:]:
        text += rng.choice(OPS) + command
    return rng.choice(("", " ", "\t")) + text + rng.choice(("", "", "", " ", ";", "; ", " ;"))


def _generated(count: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for _ in range(count):
        text = _plain(rng)
        roll = rng.random()
        if roll < 0.25:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(NEAR) + text[at:]
        elif roll < 0.45:
            text = rng.choice(WRAPS).replace("{}", text)
        out.append(text)
    return out


#: Plain words in the positions where their facts matter (a glob or quoted head refuses a rewrite).
TARGETED = [
    f"{head} {tail}"
    for head in ("sudo", "env", "nice", "timeout 5", "command", "xargs", "find -exec", "rtk", "ls")
    for tail in ("a?b", "*.py", "~/x", "'q'", '"d"', "x 2>&1", "2>&1", "2>&1 | wc -l", "'*' ?")
]
INPUTS = [
    text  # long inputs only when plain: the others take the same tree walk either way
    for text in dict.fromkeys(_corpus() + TARGETED + _generated(4000))
    if len(text) <= 2000 or plainpath.commands(text) is not None
]


def _tree_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plainpath, "commands", lambda text, not_single=False: None)
    _no_single(monkeypatch)


def _no_single(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch off the single-command path of `assemble` (the walk then runs)."""
    monkeypatch.setattr(assemble, "_single", lambda text, words, transparent: None)


def test_the_fast_path_is_taken_for_plain_input():
    """The comparison below means something only if the fast path really runs."""
    taken = sum(1 for text in INPUTS if plainpath.commands(text) is not None)
    assert taken > 2000
    for text in ("git status && cargo test 2>&1 | tail -5; ls", "make&&a=b", "A=1 B=2 ls ~ *.py ;"):
        assert plainpath.commands(text) is not None, text
    for text in (
        "echo $HOME",
        "ls > f",
        "a &",
        "if x; then y; fi",
        "x@y z",
        "a\nb",
        "| x",
        "ls ;;",
    ):
        assert plainpath.commands(text) is None, text


@pytest.mark.parametrize("prefixes", [(), PREFIXES], ids=["no-prefixes", "prefixes"])
def test_fast_path_equals_the_tree_walk(monkeypatch, prefixes):
    """Every input (with prefixes: every input that holds one): the same CommandLine with the fast
    path on and off."""
    inputs = [t for t in INPUTS if not prefixes or "direnv" in t or "myjail" in t]
    assert len(inputs) > 300
    fast = [parse(text, prefixes) for text in inputs]
    _tree_only(monkeypatch)
    slow = [parse(text, prefixes) for text in inputs]
    diffs = [(t, f, s) for t, f, s in zip(inputs, fast, slow, strict=True) if f != s]
    assert not diffs, "\n".join(f"{t!r}\n  fast {f!r}\n  tree {s!r}" for t, f, s in diffs[:3])


def _single_path(text: str, prefixes: tuple[str, ...]) -> object:
    """`assemble._single` of a one-command plain source."""
    words = plainpath.single_words(text)
    assert words is not None, text
    return assemble._single(text, words, prefixes)


@pytest.mark.parametrize("prefixes", [(), PREFIXES, ("rtk", "noglob")], ids=["none", "some", "rtk"])
def test_single_command_path_equals_the_walk(monkeypatch, prefixes):
    """`assemble._single` (one plain command, no walk) gives the walk's CommandLine; it is taken
    for most plain inputs and declines the ones that run nested code."""
    inputs = [t for t in INPUTS if plainpath.single_words(t) is not None]
    inputs += [f"{w} {t}" for t in inputs[:300] for w in ("sudo", "rtk", "direnv exec .", "env")]
    assert len(inputs) > 1000
    taken = [t for t in inputs if _single_path(t, prefixes) is not None]
    assert len(taken) > len(inputs) // 2
    for text in ("bash x.sh", "xargs rm", "sudo eval x", "env -S ls"):
        assert _single_path(text, prefixes) is None, text
    fast = [parse(text, prefixes) for text in inputs]
    _no_single(monkeypatch)
    slow = [parse(text, prefixes) for text in inputs]
    diffs = [(t, f, s) for t, f, s in zip(inputs, fast, slow, strict=True) if f != s]
    assert not diffs, "\n".join(f"{t!r}\n  single {f!r}\n  walk {s!r}" for t, f, s in diffs[:3])


def test_positional_models_equal_the_keyword_fallback(monkeypatch):
    """`draft._new_segment` / `assemble._new_command_line` pass fields by position; the keyword
    fallback (taken when the models' fields differ from the recorded order) gives equal values."""
    # the recorded field orders match the models (if a field was added: record it there too)
    assert draft._POSITIONAL, "update draft._SEGMENT_FIELDS to the fields of Segment"
    assert assemble._POSITIONAL, "update assemble._FIELDS to the fields of CommandLine"
    inputs = INPUTS[:3000]
    positional = [parse(text) for text in inputs]
    monkeypatch.setattr(draft, "_new_segment", draft._segment_by_keywords)
    monkeypatch.setattr(assemble, "_new_command_line", assemble._command_line_by_keywords)
    assert [parse(text) for text in inputs] == positional


def test_context_shortcuts_equal_replace():
    """`draft.with_ops` / `with_pipe` build the same `Ctx` as `_replace` (fields by position)."""
    ctx = draft.Ctx(3, "eval", 5, True, True, "a", "b", 7, 1, 4, True, "why")
    assert draft.with_ops(ctx, "&&", "|") == ctx._replace(op_before="&&", op_after="|")
    piped = ctx._replace(pipe_id=9, pipe_index=2, pipe_size=3, pipe_stderr=False)
    assert draft.with_pipe(ctx, 9, 2, 3) == piped
    assert type(draft.with_ops(ctx, "", "")) is draft.Ctx
    quiet = ctx._replace(background=False)
    for bg in (False, True):
        expected = quiet._replace(op_before=";", op_after="", background=bg)
        assert draft.with_ops(quiet, ";", "", bg) == expected
    assert draft.with_ops(ctx, ";", "", False).background  # an enclosing & is kept
    for stderr in (False, True):
        expected = ctx._replace(pipe_id=2, pipe_index=0, pipe_size=2, pipe_stderr=stderr)
        assert draft.with_pipe(ctx, 2, 0, 2, stderr) == expected


#: Quoted words and operators in the shapes `assemble._plain` takes (and near misses it declines).
QUOTED_SHAPES = [
    f"{head} {word}{op}{tail}"
    for head in ("git commit -m", "grep -rn", "A='x y' ls", "'rm'", '"rm" -rf', "sudo", "echo",
                 "'coproc'")
    for word in ("'foo bar'", '"fix the bug"', "''", '""', "a='b c'", "'a && b'", '"x|y"', "'#c'",
                 '"don\'t"', "'$((1))'", "'${a b}'", "'@(x)'", "'(x)'", '"*.py"',
                 "'unterminated", "'bash' -c 'ls'", "x 2>&1")
    for op in ("", " && ", " | ", "; ", " || ")
    for tail in ("", "wc -l", "'cat'", "xargs 'rm'", "env -S 'ls x'")
    if tail or not op
]  # fmt: skip


def test_a_plain_source_scans_as_nothing():
    """`assemble._plain` skips `scan` for plain sources (`scan.plain_scan()`): it would find
    nothing in them."""
    inputs = [t for t in INPUTS + QUOTED_SHAPES if plainpath.commands(t) is not None]
    assert len(inputs) > 2000
    for text in inputs:
        assert repr(scan.scan(text)) == repr(scan.plain_scan()), text  # mutable: no ==


def _plain_path(text: str, prefixes: tuple[str, ...]) -> object:
    """`assemble._plain` of a plain source, walked as `assemble` walks it."""
    walker = Walker(prefixes)
    walker.walk_source(Source(text, 0), draft.Ctx(), plain=plainpath.commands(text))
    return assemble._plain(text, walker)


@pytest.mark.parametrize("prefixes", [(), PREFIXES, ("rtk", "noglob")], ids=["none", "some", "rtk"])
def test_plain_source_path_equals_the_walk(monkeypatch, prefixes):
    """`assemble._plain` (plain sources, drafts from the walk's `plain_sequence`, no scan or line
    analysis) gives the walk's CommandLine; it declines sources whose commands run code."""
    inputs = [t for t in INPUTS + QUOTED_SHAPES if plainpath.commands(t) is not None]
    inputs += [f"{w} {t}" for t in inputs[:300] for w in ("sudo", "rtk", "direnv exec .", "env")]
    taken = [t for t in inputs if _plain_path(t, prefixes) is not None]
    assert len(taken) > len(inputs) // 2
    for text in ("bash -c 'ls' && x", "a | xargs rm", "sudo eval x; y", "env -S 'ls x' | y"):
        assert _plain_path(text, prefixes) is None, text
    fast = [parse(text, prefixes) for text in inputs]
    monkeypatch.setattr(assemble, "_plain", lambda text, walker: None)
    slow = [parse(text, prefixes) for text in inputs]
    diffs = [(t, f, s) for t, f, s in zip(inputs, fast, slow, strict=True) if f != s]
    assert not diffs, "\n".join(f"{t!r}\n  plain {f!r}\n  walk {s!r}" for t, f, s in diffs[:3])


def test_plain_words_equal_the_dequoter():
    """Every word `plainpath.commands` cuts (quoted ones by `_quoted_word`) is what `make_word`
    makes of it."""
    seen = 0
    for text in INPUTS + QUOTED_SHAPES:
        for words, _, _, _ in plainpath.commands(text) or ():
            for w in words:
                assert w == make_word(w.raw, w.start), (text, w)
                seen += "'" in w.raw or '"' in w.raw
    assert seen > 1000


def _regex_commands(text: str) -> object:
    """`plainpath.commands(text)` by its regexes alone."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plainpath, "_single_command", lambda text, not_single=False: None)
        return plainpath.commands(text)


def test_blank_separated_sequences_agree_with_the_regexes(monkeypatch):
    """`plainpath._single_command` cuts `cd app && npm test` without a regex: what it returns is
    what the regexes give, and it declines operators glued to words or out of place."""
    rng = random.Random(11)
    inputs = INPUTS + [rng.choice(OPS).join(_plain(rng) for _ in range(3)) for _ in range(2000)]
    inputs += ["a && b", "a ; b || c", "a  ||\tb", "&& a", "a &&", "a && && b", "a ;", "a&&b",
               "a & b", "a |& b", "a 2>&1 | b", "cd app && npm test",
               "ls -la | head -20"]  # fmt: skip
    got = {t: plainpath._single_command(t) for t in inputs}
    monkeypatch.setattr(plainpath, "_single_command", lambda text, not_single=False: None)
    sequences = 0
    for text, single in got.items():
        if single is not None:
            assert single == plainpath.commands(text), text
            sequences += len(single) > 1
    assert sequences > 100
    for text in ("cd app && npm test", "ls -la | head -20", "a ; b || c"):
        assert got[text] is not None and len(got[text]) > 1, text
    for text in ("&& a", "a &&", "a && && b", "a ;", "a&&b", "a & b", "a |& b", "a 2>&1 | b"):
        assert got.get(text) is None, text
    monkeypatch.undo()
    for count in (plainpath.MAX_COMMANDS, plainpath.MAX_COMMANDS + 1):  # the limit is the same
        text = " ; ".join(["ls -la"] * count)
        assert (plainpath._single_command(text) is None) == (count > plainpath.MAX_COMMANDS)
        assert plainpath._single_command(text) == _regex_commands(text)


def test_fast_path_patterns_use_no_possessive_quantifier_or_atomic_group():
    """Possessive quantifiers and atomic groups match differently before later CPython 3.11 bug-fix
    releases (Debian 12's 3.11.2 accepted `ls ;;` on the fast path): the parser uses neither."""
    import re as stdlib_re

    sources = [
        value
        for name, value in vars(plainpath).items()
        if name.startswith("_") and isinstance(value, str) and len(value) > 3
    ]
    assert any("[A-Za-z" in source for source in sources)  # the patterns were found
    for source in sources:
        assert not stdlib_re.search(r"[*+?}]\+|\(\?>", source), source


def test_argument_facts_in_one_pass_equal_each_function():
    """`argv.argument_facts` reads a command's arguments once for its subcommand, flags, operands
    and paths: the same values `subcommand`, `flags`, `operands` and `operand_paths` give, on
    every corpus command and on generated arguments (global options and their values, `-`, `--`,
    empty words, paths to land)."""
    from rtk_policy.shell.argv import GLOBAL_OPTIONS, argument_facts, flags, operands, subcommand
    from rtk_policy.shell.paths import operand_paths

    cases = [(s.program, s.args, s.cwd) for text in INPUTS[:4000] for s in parse(text).segments]
    rng = random.Random(20)
    pool = ("-C", "-c", "x", "-n", "prod", "-", "--", "", "./a", "a//b", "$HOME/x", ".", "b/",
            "-v", "--repo", "~/y", "push", "/tmp/../etc", "-rf", "--namespace")  # fmt: skip
    for _ in range(4000):
        program = rng.choice((*GLOBAL_OPTIONS, "rm", "ls"))
        args = tuple(rng.choice(pool) for _ in range(rng.randrange(0, 7)))
        cases.append((program, args, rng.choice(("", "..", "/srv", "?", "~"))))
    assert any("--" in args for _, args, _ in cases)
    for program, args, cwd in cases:
        expected = (subcommand(program, args), flags(args), operands(program, args))
        expected += (operand_paths(args, cwd),)
        assert argument_facts(program, args, cwd) == expected, (program, args, cwd)


def _single_words_by_definition(text: str) -> object:
    """`plainpath.single_words(text)` as its docstring defines it, word by word (the oracle of
    its shortcuts: one look for an argument starting with `=`, tabs replaced only when present)."""
    if not plainpath._SINGLE_CHARS.issuperset(text):
        return None
    words: list[object] = []
    start = 0
    for raw in text.replace("\t", " ").split(" "):
        if raw:
            if words:
                if raw[0] == "=":
                    return None
            elif (
                raw[0] == "-"
                or not plainpath._PROGRAM_CHARS.issuperset(raw)
                or raw in plainpath.RESERVED
            ):
                return None
            words.append(make_word(raw, start))
        start += len(raw) + 1
    return words or None


def test_single_words_equal_their_definition():
    """`single_words` gives the words its definition gives, on the inputs and on short texts of
    its own characters (blanks, `=` and `-` where they matter)."""
    rng = random.Random(5)
    alphabet = "ab -=\t ./:,+@%~_9"
    texts = INPUTS + ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
                      for _ in range(20_000)]  # fmt: skip
    texts += ["a =b", "=a b", " =a", "a\t=b", "a b=c", "a\tb", "\ta\t\tb ", "-a b", "if x"]
    for text in texts:
        assert plainpath.single_words(text) == _single_words_by_definition(text), repr(text)


def test_commands_told_not_single_equal_commands():
    """`commands(text, not_single=True)`, which skips `single_words`, is `commands(text)` for
    every text whose `single_words` is None (the only texts `assemble` passes it)."""
    checked = 0
    for text in INPUTS:
        if plainpath.single_words(text) is None:
            assert plainpath.commands(text, True) == plainpath.commands(text), text
            checked += 1
    assert checked > 1000


def test_language_cache_equals_the_pattern():
    """`scripts.language` is cached: every answer is the pattern's, asked once or again."""
    from rtk_policy.shell import scripts

    names = ["python3", "python3.11", "pypy", "node", "nodejs", "ruby", "perl5", "php8",
             "awk", "gawk", "busybox-awk", "git", "", "Python", "nodes", "x" * 300]  # fmt: skip
    for name in names * 2:
        assert scripts.language(name) == scripts.language.__wrapped__(name), name
