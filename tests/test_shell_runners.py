"""Tool runners (`poetry run CMD`, `bundle exec CMD`, `direnv exec DIR CMD`, `mise exec -- CMD`,
`docker exec C CMD`, `kubectl exec P -- CMD`, …) and ssh's remote command: what a runner runs is a
nested segment, so a deny behind a runner is never lost, while the runner's own segment keeps RTK's
rewrite (`bundle exec rspec` → `rtk rspec`)."""

from __future__ import annotations

import pytest

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.shell import parse
from rtk_policy.shell.nested import RUNNERS

#: a form of each runner, `{}` standing for the command it runs
FORMS = [
    "poetry run {}",
    "poetry -C some/dir run {}",
    "poetry run -- {}",
    "pipenv run {}",
    "pdm run -p proj {}",
    "hatch run {}",
    "rye run {}",
    "pixi run {}",
    "pixi exec {}",
    "conda run -n env {}",
    "mamba run --prefix /opt/env {}",
    "micromamba run -n env {}",
    "bundle exec {}",
    "bundle exec --gemfile=Gemfile {}",
    "asdf exec {}",
    "rbenv exec {}",
    "pyenv exec {}",
    "nodenv exec {}",
    "goenv exec {}",
    "jenv exec {}",
    "direnv exec . {}",
    "direnv exec /some/project {}",
    "mise exec -- {}",
    "mise exec node@20 python@3.12 -- {}",
    "mise x -- {}",
    "rtx exec -- {}",
    "op run -- {}",
    "op run --env-file .env -- {}",
    "doppler run -- {}",
    "doppler run -p web -c dev -- {}",
    "aws-vault exec prod -- {}",
    "aws-vault exec -d 1h prod {}",
    "dotenv run {}",
    "dotenv -f .env run {}",
    "dotenv -e .env -- {}",
    "chronic {}",
    "with-contenv {}",
    "/usr/local/bin/poetry run {}",
    "npx {}",
    "npx -p some-package {}",
    "npm exec -- {}",
    "npm x {}",
    "pnpm exec {}",
    "pnpm dlx {}",
    "yarn exec {}",
    "bunx {}",
    "bun x {}",
    "docker exec web {}",
    "docker exec -it -e A=1 -u root -w /app web {}",
    "docker -H tcp://host:2375 exec web {}",
    "podman exec web {}",
    "kubectl exec web-1 -- {}",
    "kubectl -n prod exec -it web-1 -c app -- {}",
    "docker compose exec web {}",
    "docker compose -f dev.yml exec -T web {}",
    "docker compose run --rm -e A=1 web {}",
    "docker-compose exec web {}",
    "podman-compose exec web {}",
]
#: runners given a shell script in an option, `{}` standing for the script
SCRIPT_FORMS = [
    "npx -c '{}'",
    "npm exec -c '{}'",
    "npm exec --call '{}'",
    "nix-shell --run '{}'",
    "nix-shell -p git --command '{}'",
    "mise exec -c '{}'",
]


@pytest.fixture(scope="module")
def engine():
    """The shipped policies, compiled afresh."""
    return load_engine(use_cache=False)


@pytest.mark.parametrize("form", FORMS)
def test_the_command_a_runner_runs_is_a_nested_segment(form):
    """`rm -rf /` behind the runner: its own segment, one level down, child of the runner's."""
    line = parse(form.format("rm -rf /"))
    outer, inner = line.segments[0], line.segments[-1]
    assert outer.program in RUNNERS and outer.depth == 0
    assert (inner.program, inner.args) == ("rm", ("-rf", "/"))
    assert (inner.depth, inner.parent, inner.rewritable) == (1, outer.index, False)


@pytest.mark.parametrize("form", FORMS)
def test_a_deny_behind_a_runner_is_not_lost(engine, form):
    """The same deny as the bare command, also with a wrapper or a shell around the runner."""
    context = engine.context(agent="claude")
    for text in (form, "sudo " + form, "bash -c '" + form + "'", "timeout 5 " + form):
        decision = engine.decide(text.format("rm -rf /"), context)
        assert decision.verdict == "deny", text


@pytest.mark.parametrize("form", SCRIPT_FORMS)
def test_the_script_a_runner_is_given_is_walked_as_bash_c_would_be(engine, form):
    """`npx -c 'rm -rf / && ls'`: each command of the script is a nested segment; the deny holds."""
    line = parse(form.format("rm -rf / && ls"))
    nested = [(s.program, s.depth, s.origin) for s in line.segments[1:]]
    assert nested == [("rm", 1, "shell_c"), ("ls", 1, "shell_c")]
    assert engine.decide(form.format("rm -rf /"), engine.context(agent="claude")).verdict == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "npm test",
        "npm install",
        "npm run build",
        "pnpm install",
        "yarn test",
        "bun install",
        "nix-shell -p nodejs",
        "docker ps",
        "docker exec web",
        "kubectl get pods",
        "docker compose up -d",
        "docker compose ps",
        "docker-compose logs -f web",
        "kubectl exec web-1",  # no command after `--`
        "poetry install",
        "poetry run",
        "poetry run --help",
        "bundle install",
        "bundle exec",
        "mise exec node@20",  # tools, but no command after `--`
        "mise install",
        "direnv exec .",  # a folder, but no command
        "direnv allow",
        "aws-vault exec prod",
        "conda install numpy",
        "dotenv list",
        "asdf install",
    ],
)
def test_a_runner_form_that_runs_no_command_adds_no_segment(text):
    """Another subcommand, help, tools without `--`, a runner without its command: one segment."""
    assert len(parse(text).segments) == 1


def test_runners_nest():
    """A runner inside a runner: each command one level further down."""
    line = parse("direnv exec . poetry run rm -rf /")
    assert [(s.program, s.depth, s.parent) for s in line.segments] == [
        ("direnv", 0, -1),
        ("poetry", 1, 0),
        ("rm", 2, 1),
    ]


@pytest.mark.parametrize(
    ("text", "rewrite"),
    [
        ("bundle exec rspec", "rtk rspec"),
        ("bundle exec rubocop -a", "rtk rubocop -a"),
        ("mise exec -- cargo test", "rtk mise exec -- cargo test"),
        ("poetry install", "rtk poetry install"),
        ("poetry run pytest", None),
        ("npx eslint src/", "rtk lint src/"),
        ("pnpm exec prisma generate", "rtk prisma generate"),
        ("npm run build", "rtk npm run build"),
        ("direnv exec . npm test", None),
    ],
)
def test_the_runner_keeps_its_own_rewrite(engine, text, rewrite):
    """The nested segment is never rewritten; the runner's segment is rewritten as RTK does."""
    decision = engine.decide(text, engine.context(agent="claude"))
    assert decision.rewritten == rewrite
    assert decision.verdict == "none"


@pytest.mark.parametrize(
    "text",
    [
        "ssh prod rm -rf /",
        "ssh prod 'rm -rf /'",
        "ssh -p 2222 -i ~/.ssh/key deploy@prod rm -rf /",
        "ssh -p2222 prod 'rm -rf /'",
        "ssh prod -t 'rm -rf /'",  # OpenSSH takes options after the host too
        "ssh -- prod rm -rf /",
        "ssh -tt prod 'cd /srv && rm -rf /'",
    ],
)
def test_the_remote_command_of_ssh_is_walked_as_its_shell_would(engine, text):
    """ssh joins its command words by spaces for the remote shell: walked like `sh -c`."""
    line = parse(text)
    assert line.segments[0].program == "ssh"
    assert ("rm", ("-rf", "/"), "shell_c") in [(s.program, s.args, s.origin) for s in line.segments]
    assert engine.decide(text, engine.context(agent="claude")).verdict == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "ssh prod",
        "ssh -t prod",
        "ssh -N -L 8080:localhost:80 prod",
        "ssh -W host:22 jump",
        "ssh -O exit prod",
    ],
)
def test_ssh_without_a_remote_command_adds_no_segment(text):
    """A login shell, a tunnel (-N), stdio forwarding (-W) or a control command (-O)."""
    assert len(parse(text).segments) == 1
