"""Runners of runners (issue 18, class 1): GNU parallel, the `-I` script of xargs, tmux, at/batch,
crontab, watch, `docker|podman run`, arch, `rtk proxy`, `runuser -u`, `fish -c`, `env -S`.

Each command goes through the real engine with the security baseline; the parse tests check the
guessed copies (`Segment.guessed`) the shell stage makes where a value is unknown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.shell import parse
from rtk_policy.shell.launchers import crontab_commands, fill, parallel_job
from rtk_policy.shell.words import make_word

PACK = Path(__file__).resolve().parents[1] / "policies" / "security-baseline.yaml"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(policies=load_policy_set([str(PACK)]), config=Config(audit_enabled=False))


def verdict(engine: Engine, text: str) -> str:
    return engine.decide(text, engine.context()).verdict


@pytest.mark.parametrize(
    "text",
    [
        "parallel rm -rf {} ::: /",
        "parallel -j4 rm -rf {} ::: build /",
        "parallel --jobs=2 rm -rf ::: /etc",
        "parallel 'rm -rf {}' ::: /",
        "parallel ::: 'rm -rf /'",
        "parallel bash -c 'rm -rf {}' ::: /",
        "echo / | parallel rm -rf",
        "printf 'rm -rf /\\n' | parallel",
        "echo / | xargs -I{} bash -c 'rm -rf {}'",
        "echo / | xargs -I % sh -c 'rm -rf %'",
        "echo / | xargs --replace bash -c 'rm -rf {}'",
        "xargs -I{} sh -c 'rm -rf {}' <<< /",
        "arch -x86_64 rm -rf /",
        "arch -arch arm64 -e A=1 rm -rf ~",
        "rtk proxy rm -rf /",
        "runuser -u deploy -- rm -rf /",
        "runuser -l deploy -c 'rm -rf /'",
        "fish -c 'rm -rf /'",
        "fish --command='rm -rf ~'",
        "env -S'rm -rf /'",
        "env --split-string='git push -f'",
        "tmux new-session -d 'rm -rf /'",
        "tmux -L sock new -s x -c /tmp 'rm -rf ~'",
        "tmux send-keys -t work 'rm -rf /' Enter",
        "tmux run-shell 'rm -rf /etc'",
        "at now <<< 'rm -rf /'",
        "echo 'rm -rf /' | at now",
        "batch <<EOF\nrm -rf /usr\nEOF",
        "echo '*/5 * * * * rm -rf /' | crontab -",
        "crontab -u bob - <<< '@reboot rm -rf ~'",
        "watch -n 5 'rm -rf /'",
        "watch sh -c 'rm -rf /etc'",
        "docker run --rm alpine rm -rf /",
        "docker run --rm -e A=1 -v /data:/data --name x ubuntu:22.04 bash -c 'rm -rf /'",
        "docker run --rm --entrypoint=/bin/sh alpine -c 'rm -rf /'",
        "podman container run -it fedora rm -rf /",
    ],
)
def test_denied_through_a_launcher(engine, text):
    assert verdict(engine, text) == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "cat dirs.txt | xargs -I{} bash -c 'rm -rf {}'",
        "find . -type d | parallel bash -c 'rm -rf {}'",
        "parallel rm -rf {} :::: dirs.txt",
        "cat jobs.txt | parallel",
        "cat job.sh | at now",
        'tmux send-keys -t work "$CMD" Enter',
    ],
)
def test_asked_where_the_value_or_script_is_unknown(engine, text):
    assert verdict(engine, text) == "ask"


@pytest.mark.parametrize(
    "text",
    [
        "parallel rm -rf {} ::: build dist",
        "parallel --version",
        "parallel --dry-run rm -rf {} ::: /",
        "ls *.csv | parallel wc -l",
        "find . -name '*.o' | xargs -I{} sh -c 'rm -f {}'",
        "echo build | xargs -I{} bash -c 'rm -rf {}'",
        "arch",
        "arch -arm64 make test",
        "runuser -u postgres -- psql -c 'select 1'",
        "tmux new -s main",
        "tmux send-keys -t work 'npm test' Enter",
        "atq",
        "crontab -l",
        "echo '0 3 * * * /usr/local/bin/backup.sh' | crontab -",
        "docker run --rm alpine echo hi",
        "docker run --rm --entrypoint sh alpine -c 'ls /'",
        "script -q -c 'make test' build.log",
    ],
)
def test_harmless_launches_are_not_asked(engine, text):
    assert verdict(engine, text) in ("none", "allow")


def test_an_unknown_replacement_is_a_guessed_copy():
    line = parse("find . | xargs -I{} rm -rf {}")
    guessed = [s for s in line.segments if s.guessed]
    assert [(s.program, s.args) for s in guessed] == [("rm", ("-rf", "/"))]
    assert not any(s.guessed for s in line.segments if s.args != ("-rf", "/"))
    assert all(not s.rewritable for s in guessed)


def test_a_shown_value_is_not_a_guess():
    line = parse("echo build | xargs -I{} rm -rf {}")
    assert [(s.args, s.guessed) for s in line.segments if s.program == "rm"] == [
        (("-rf", "{}"), False),
        (("-rf", "build"), False),
    ]


def test_parallel_reads_its_argument_lists():
    words = [make_word(w, 0) for w in "parallel -j 2 -I @ rm @ ::: a b :::: list".split()]
    job = parallel_job(words)
    assert job is not None
    assert [w.value for w in job.command] == ["rm", "@"]
    assert (job.values, job.unknown, job.replace) == (["a", "b"], True, "@")
    assert fill("rm @", "x y", "@") == "rm 'x y'"
    assert fill("rm -rf", "/", None) == "rm -rf /"


def test_crontab_lines_give_their_commands():
    text = "# m h dom mon dow\nMAILTO=x\n*/5 * * * * rm -rf /tmp/x\n@daily make backup\n"
    assert crontab_commands(text) == ["rm -rf /tmp/x", "make backup"]


def test_guessed_asks_say_what_was_guessed(engine):
    decision = engine.decide("cat d | xargs -I{} rm -rf {}", engine.context())
    assert decision.verdict == "ask"
    assert any("unknown" in reason and "'/'" in reason for reason in decision.reasons)
