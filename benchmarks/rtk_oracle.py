"""Differential check of `rtk-policy rewrite` against a real RTK binary (`rtk rewrite`).

Usage (from the repository root; the RTK binary is not needed by the test suite):

    /work/venv/bin/python benchmarks/rtk_oracle.py [--rtk /work/peers/rtk/bin/rtk] [--out /tmp/oracle]

It builds a command set (every input of the public RTK corpus, every line of tests/corpus/*.txt and
*.jsonl, and generated variants of the rule table of reference §3.9 under wrappers, env prefixes,
operators, pipes, redirects and quoting), runs each command through `rtk rewrite CMD` (one process per
command) and through `rtk-policy rewrite --batch -`, both with an empty HOME and XDG directories under
`--out`, so no Claude Code rules or config apply, and compares exit code and stdout.

Writes `<out>/commands.jsonl` (the set), `<out>/diff.jsonl` (one object per difference, with the
generating variant) and prints a summary grouped by variant. Classifying a difference (we are wrong,
RTK differs from the reference, reference silent) is manual: see the report in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT.parent / "shared" / "reference" / "rtk_cases_public.json"

#: base commands: one or more per rule of the reference rule table (§3.9), plus non-rewritable ones
BASES = """
git status|git status -s|git log --oneline -5|git diff HEAD~1|git show HEAD|git add .|git commit -m "msg"
git checkout main|git push origin main|git pull --rebase|git branch -a|git fetch --all|git stash pop
git worktree list|git -C /tmp status|git --no-pager log|git rebase main|git blame f.rs|yadm status
gh pr list|gh issue view 3|gh run list|gh repo view|gh api repos/x/y|gh release list|gh pr list --json number
gh prs|glab mr list|glab ci status|cargo build --release|cargo test|cargo clippy -- -D warnings
cargo check|cargo fmt --check|cargo install ripgrep|cargo run|cargo builder|pnpm install|pnpm i
pnpm list|pnpm outdated|pnpm run build|pnpm -r install|pnpm -r lint|pnpm test|npm run build|npm test
npm exec foo|npm x tsc|npx prettier --check .|npx tsc --noEmit|npx vitest run|npx eslint src
npx next build --turbo|npx jest --watch|npx playwright test|npx prisma generate|npx cowsay hi
cat README.md|cat -n src/main.rs|cat -A f|cat a b|head -20 f.txt|head -n 5 f.txt|head f.txt
head --lines=3 f|head -c 10 f.bin|tail -5 log.txt|tail -n 20 log.txt|tail f.txt|tail -f log.txt
grep -rn TODO src|grep -l foo .|rg pattern src/|rg --files|ast-grep -p x|ls|ls -la|ls src
find . -name "*.rs"|tsc --noEmit|eslint .|biome check|prettier --write .|next build|jest|vitest
vitest run|ctest|playwright test|prisma migrate dev|docker ps|docker images|docker logs app
docker run --rm img|docker exec -it app sh|docker build .|docker compose ps|docker compose up -d
docker psql|kubectl get pods|kubectl logs pod|kubectl describe pod x|kubectl apply -f x.yaml
kubectl getall|oc get pods|oc status|tree|tree -L 2|diff a b|curl -s https://x|wget https://x
mypy src|python -m mypy src|python3 -m pytest -x tests/|pytest|pytest -q tests/|ruff check .
ruff format .|sqlfluff lint|pip list|pip3 install x|pip installer|uv pip list|uv run pytest
uv run python script.py|uv sync|go test ./...|go build ./...|go vet ./...|go run .
golangci-lint run|golangci-lint --color never run ./...|sbt test|sbt compile|sbt tester|bundle install
bundle exec rspec|bundle exec rubocop|bundle exec rake test|rake test|rails test|bin/rails test
rspec|rubocop|php artisan migrate|php -l x.php|php run-tests.php|phpunit|vendor/bin/phpunit
php vendor/bin/phpunit|phpstan analyse|./vendor/bin/pest|pint|paratest|ecs|aws s3 ls|psql -c "select 1"
bun install|bun test|bun run dev|bun xtask|bunx foo|deno test|deno run main.ts|deno testify
ansible-playbook site.yml|brew install jq|brew upgrade|composer install|df -h|dotnet build
dotnet build-server|du -sh .|fail2ban-client status|gcloud compute list|./gradlew test|gradlew build
gradle build|gradlew.bat test|hadolint Dockerfile|helm list|helm-docs|iptables -L|make|make test
markdownlint .|mix compile|mvn clean install|mvn -B test|./mvnw test|mvnd test|ping -c 1 x
pio run|poetry install|pre-commit run --all-files|ps aux|pulumi up|quarto render|rsync -a a b
shellcheck x.sh|shopify theme push|sops -d x|swift build|systemctl status nginx|terraform plan
tofu plan|trunk build|yamllint .|wc -l f|gt log|liquibase update|jj log|jq .|just build
htop|vim x|echo hi|cd /tmp|rm -rf build|mkdir -p x|sort f|awk '{print}' f|sed -n 1p f|python3 x.py
python -c "print(1)"|node -e "1"|true|sleep 1|export A=1|printf x|which git|env|xargs grep x
""".replace("\n", "|")

#: single probes of finer rules (§3.4 pipes, §3.5 wrappers and normalisation, §3.9 spellings, §3.10),
#: one a line; <NL> <TAB> <CR> <FF> <NBSP> stand for those characters, <BSNL> for backslash-newline
PROBES = r"""
git -c color.ui=never status
git --git-dir=.git log
git --work-tree=. diff
git --no-optional-locks status
git --bare log
git --literal-pathspecs diff
git -C a -C b status
git -C a reset --hard
git status -- .
yadm -C x log
gh pr view 3 --jq .title
gh pr view 3 --template x
gh api /x --json a
gh pr list -L 5
npx tsc
pnpm exec tsc
npm run eslint
pnpm dlx prettier --check .
npm exec -- jest
npx vitest run --coverage
npx jest run
pnpm vitest run
npm run-script lint
npm rum lint
npm urn lint
npm x prisma generate
pnpx tsc
pnpm run lint
pnpm -w install
pnpm --filter web install
pnpm --filter=web install
pnpm -F web i
pnpm -x install
python -m pytest
python3 -m pytest -k x
python3.11 -m pytest
python -m mypy .
python3 -m mypy --strict x
bundle exec rails test
bin/rails test:system
rake test:units
rails test:models
bundle exec rake spec
php artisan test
./vendor/bin/phpunit --filter x
php bin/phpunit
vendor/bin/phpstan analyse src
phpstan analyze
./vendor/bin/paratest
vendor/bin/ecs check
./vendor/bin/pint --test
php run-tests.php x
php -l a.php b.php
head -n5 f.txt
head -n 5 a b
tail -n +5 f.txt
tail --lines=5 f.txt
tail --lines 5 f.txt
tail -F log
tail --follow=name log
tail -n5 f
cat -- f
cat -n -n f
cat f1 f2
cat -
cat -n
head --lines=5 f
head -5 *.rs
head -5 $F
head -5 'f.txt'
head -5 ~/f
head -5 src/日本語.rs
cat ~/.bashrc
cat "a b"
head -c 5 f
tail -c 5 f
git log | head
git log | head -n 3
git log | tail -f
git log | tail -n 5
git log | cat
git log | cat -n
git log | grep -l x
git log | grep -c x
git log | grep -f pats
git log | rg x
git log | rg --files
cargo test | grep -e -l x
cargo test | grep -lc x
git log | head | tail -2
git log | FOO=1 tail
git log | /usr/bin/tail
git log | tail > f
git log | tail 2>/dev/null
git log | tail 2>&1
ls | head
ls -la | head -20
find . | head
tree | head
diff a b | head
df -h | head
du -sh * | sort
ps aux | grep node
docker ps | grep x
kubectl get pods | grep x
grep -rn x . | head
rg x | head
rg -l x | head
grep -l x . | head
cat f | grep x
head -5 f | grep x
go test ./... | tail -20
pytest -q | tail -5
mypy . | head
ruff check . | head
make | tail
npm run build | tail
git log | time -v grep foo
ls | time git status
cargo test | timeout 5 grep error
cargo test | nice grep x
timeout 5 nice -n 2 git status
env FOO=1 timeout 5 cargo test
nohup cargo build &
exec git status
command -v git
builtin cd x
nocorrect git status
timeout -k 5s 300 cargo test
timeout --signal=KILL 5 cargo test
timeout 5s
nice -5 cargo build
nice -n5 cargo build
nice --adjustment=5 cargo build
nice -x cargo build
time -p cargo build
time -- cargo build
time -p -- git status
env -u FOO git status
env -C /tmp git status
env -- git status
FOO=1 BAR=2 git status
FOO+=1 git status
FOO='a b' git status
A=1 env B=2 git status
env env git status
/usr/bin/env git status
'/usr/bin/env' git status
/usr/bin/timeout 5 git status
/usr/bin/nohup git status
timeout 5 rtk git status
noglob rtk git status
sudo -u root git status
sudoedit f
FOO=1 sudo git status
"git" status
'git' status
\git status
g"it" status
git "status"
git 'log'
/opt/git/bin/git status
./git status
git status<BSNL>  --short
git  status
git<TAB>status
git status<TAB>-s
  git status  
git status<NL><NL>
<NL>git status
git commit -m "a && b; c"
git commit -m 'x | y'
grep -r 'a|b' .
grep -rnE '\.set\(|\.setex\(' /tmp/code
echo $(git status)
echo `git status`
diff <(git status) <(git log)
git log --format=$(date)
cat <<EOF
git status <<< x
git status < in.txt
git status >> log
git status &> /dev/null
git status &>log
git status >&2
git status 1>&2
git status 2>&-
git status >/dev/null 2>&1
git status 3>&1
make>/dev/null
cargo test&>/dev/null
git status && git log || git diff; ls & cargo test
git status ;; ls
ls |& grep x
git status | | grep x
| grep x
cargo test |
{ git status; cargo build; }
( git status; cargo build )
coproc git status
git status & ls
ls @(a|b) && git status
git log ${x:-a b} | head
[[ -f a || ls ]] && git status
(( x )) && git status
for f in a b; do git status; done | head
if true; then git status; fi | grep x
echo x | { cat; git log; } | grep f
RTK_DISABLED=1; git status
env RTK_DISABLED=1 git status
env MSG=RTK_DISABLED=1 git status
uv run RTK_DISABLED=1 git status
uv run -- cargo test
uv run --with x pytest
uv run --frozen git status
uv run python -m pytest
uv run
uv pip install x
uv run ruff check .
uv run mypy .
uv run make
uv run ls
uv run cat f
uv run head -5 f
uv run env FOO=1 pytest
make<CR>
du<NBSP>-sh
bun install<FF>
brew install foo<CR>
sbt "test:compile"
sbt "testOnly x"
bun pm ls
bun x foo
docker compose -f x.yml ps
docker compose logs app
docker compose build
docker compose -f x up
kubectl -n x get pods
golangci-lint run ./...
golangci-lint -v run
golangci-lint --config=x.yml run
golangci run
golangci-lint run > out
gradle test
./gradlew assembleDebug
./gradlew installDebug
./gradlew lintDebug
gradlew dependencies
gradle bootRun
mvnw.cmd test
mvnd.cmd test
./mvnw -q verify
mvn -pl x -am test
mvn dependency:tree
mvn clean
ruff check --fix .
ruff format --check
ruff x
pip show x
pip3 list --outdated
pip freeze
uv pip list --outdated
go vet
go test -run X ./pkg
go mod tidy
cargo test --release -- --nocapture
cargo fmt
cargo doc
cargo update
tsc -p .
tsc --build
biome lint .
lint
prettier .
next build --turbo
next dev
jest --ci
vitest --run
ctest -j4
playwright test --headed
prisma generate
prisma db push
docker images -a
docker logs -f app
docker exec app ls
kubectl logs -f pod
kubectl apply -k .
oc adm top
tree -a
diff -u a b
curl https://x
wget -q https://x
sqlfluff lint x.sql
sqlfluff fix
pio run -t upload
poetry lock
poetry update x
poetry run pytest
pre-commit
ps
pulumi preview
pulumi stack ls
quarto render x.qmd
rsync -av a b
shellcheck *.sh
shopify theme pull
sops x
swift test
systemctl status
terraform plan -out x
terraform apply
tofu init
tofu apply
trunk build --release
yamllint -s .
wc
gt submit
liquibase
jj
jq
just
mise run x
nx build
hadolint
helm install x y
iptables -S
markdownlint-cli2 .
mix format
mix test
ping x
fail2ban-client
gcloud
aws
psql
bunx
bun
deno
ansible-playbook
composer require x
composer update
brew upgrade x
dotnet build -c Release
dotnet test
df
du
gh
glab
cargo
npm
"""

#: (name, template) variants: `{}` is the base command
VARIANTS = (
    ("plain", "{}"),
    ("env-prefix", "FOO=1 {}"),
    ("env-word", "env FOO=1 {}"),
    ("sudo", "sudo {}"),
    ("timeout", "timeout 5 {}"),
    ("nice", "nice -n 5 {}"),
    ("nohup", "nohup {}"),
    ("command", "command {}"),
    ("noglob", "noglob {}"),
    ("time", "time {}"),
    ("rtk", "rtk {}"),
    ("rtk-disabled", "RTK_DISABLED=1 {}"),
    ("uv-run", "uv run {}"),
    ("and-after", "{} && git status"),
    ("and-before", "git status && {}"),
    ("or", "ls || {}"),
    ("semi", "{}; echo done"),
    ("semi-nospace", "{};ls"),
    ("background", "{} &"),
    ("pipe-head", "{} | head -20"),
    ("pipe-tail", "{} | tail -5"),
    ("pipe-grep", "{} | grep x"),
    ("pipe-wc", "{} | wc -l"),
    ("pipe-last", "cat f | {}"),
    ("pipe-amp", "{} |& head"),
    ("fd-dup", "{} 2>&1"),
    ("devnull", "{} 2>/dev/null"),
    ("file-redirect", "{} > out.txt"),
    ("comment", "{} # note"),
    ("subshell", "({})"),
    ("group", "{{ {}; }}"),
    ("if", "if {}; then ls; fi"),
    ("substitution", "echo $({})"),
    ("newline", "{}\nls -la"),
    ("tabs", "{}\t"),
    ("leading-space", "  {}"),
    ("prefix-direnv", "direnv exec . {}"),
    ("prefix-bundle", "bundle exec {}"),
    ("prefix-docker", "docker exec app {}"),
)


#: §3.4: every producer family piped into every kind of consumer
PRODUCERS = (
    "git log", "cargo test", "ls -la", "find . -name x", "tree", "diff a b", "mypy .", "ruff check .",
    "pytest", "pip list", "go test ./...", "golangci-lint run", "bundle install", "rspec", "rubocop",
    "rake test", "phpunit", "brew install x", "composer install", "df -h", "dotnet build", "du -sh",
    "hadolint x", "helm list", "iptables -L", "markdownlint .", "mix compile", "mvn test", "pio run",
    "poetry install", "pre-commit run", "ps aux", "quarto render", "shellcheck x", "shopify theme push",
    "swift build", "systemctl status x", "terraform plan", "tofu plan", "trunk build", "yamllint .",
    "wc -l f", "liquibase update", "ast-grep -p x", "grep -rn x .", "rg x", "eslint .", "prettier --check .",
    "next build", "docker ps", "kubectl get pods", "gh pr list", "make", "npm run build", "jj log", "cat f",
    "head -5 f", "tail -5 f", "curl x", "aws s3 ls", "psql -c x", "pnpm list", "tsc", "jest", "vitest",
    "playwright test", "uv run pytest", "sbt test", "gradle build", "mvnd test", "deno test", "bun test",
    "grep -l x .", "rg --files", "rg -f pats", "yadm log", "npx eslint .", "python -m pytest",
)
CONSUMERS = (
    "head", "head -n 3", "tail -5", "tail -f", "tail -F", "tail --follow", "tail --fo", "tail -qF",
    "tail -fn20", "cat", "cat -n", "grep x", "grep -l x", "rg x", "rg -f p", "grep --file=p", "wc -l",
    "sort", "/usr/bin/head", "FOO=1 head", "head > f", "head 2>/dev/null", "less", "jq .", "xargs echo",
    "time -v grep x", "timeout 5 grep x", "head | tail -1", "grep x | head", "'head'", "tail '-f'",
    "FOO=1 grep x", "env grep x", "/usr/bin/grep x", "command grep x", "sudo grep x", "nice grep x",
    "nohup grep x", "grep -e -l x", "grep -fp", "rg --file=p", "'grep' x", "grep x | wc -l",
    "grep x | head -3", "rtk grep x", "head -5 f", "\\head", "tail -n +2", "cat -A", "head -c 5",
)


def _pipes() -> list[tuple[str, str]]:
    out = [("pipes", f"{p} | {c}") for p in PRODUCERS for c in CONSUMERS]
    return out + [("pipes", f"{p} 2>&1 | {c}") for p in PRODUCERS[:12] for c in CONSUMERS]


#: §3.2: lines of multi-line input, joined in pairs by a newline and by CRLF
LINES = (
    "git status", "cargo test", "ls -la", "echo hi", "# comment", "  git log -3", "rtk git status",
    "for x in a; do", "done", "if true; then", "fi", "git commit -m 'multi", "line'", "foo() {", "}",
    "git log |", "grep feat", "git status && # c", "", "ls; while true; do", "cat <<EOF", "x=$((1+2))",
    "git status # don't", "git log &&", "|| ls", "{ git status; }", "(ls)", "echo 'a\rb'",
)


def _multiline() -> list[tuple[str, str]]:
    return [("multiline", a + sep + b) for sep in ("\n", "\r\n") for a in LINES for b in LINES]


#: the variants each probe is also run under
PROBE_VARIANTS = ("plain", "env-prefix", "timeout", "and-before", "pipe-head", "fd-dup")


def _split_bases() -> list[str]:
    return [b.strip() for b in BASES.split("|") if b.strip()]


def _path_variants(base: str) -> list[tuple[str, str]]:
    """A full-path and a quoted spelling of the program word."""
    head, _, rest = base.partition(" ")
    tail = f" {rest}" if rest else ""
    out = [("full-path", f"/usr/bin/{head}{tail}")] if "/" not in head else []
    return out + [("quoted-program", f"'{head}'{tail}"), ("dq-program", f'"{head}"{tail}')]


def _probes() -> list[str]:
    marks = {"<BSNL>": "\\\n", "<NL>": "\n", "<TAB>": "\t", "<CR>": "\r", "<FF>": "\f", "<NBSP>": "\u00a0"}
    out = []
    for line in PROBES.strip("\n").split("\n"):
        for mark, char in marks.items():
            line = line.replace(mark, char)
        out.append(line)
    return out


def generated() -> list[tuple[str, str]]:
    """(variant, command) pairs of the generated part of the set."""
    out = _pipes() + _multiline()
    for probe in _probes():
        out += [(f"probe:{name}", template.format(probe)) for name, template in VARIANTS
                if name in PROBE_VARIANTS]
    for base in _split_bases():
        out += [(name, template.format(base)) for name, template in VARIANTS]
        out += _path_variants(base)
    return out


def from_corpora() -> list[tuple[str, str]]:
    """(origin, command) pairs from the public RTK corpus and tests/corpus."""
    out: list[tuple[str, str]] = []
    if PUBLIC.is_file():
        data = json.loads(PUBLIC.read_text(encoding="utf-8"))
        for key, cases in data.items():
            if not isinstance(cases, list):
                continue
            for case in cases:
                cmd = case.get("cmd") if isinstance(case, dict) else None
                if isinstance(cmd, str):
                    out.append((f"public:{key}", cmd))
    for path in sorted((ROOT / "tests" / "corpus").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                out.append((f"corpus:{path.name}", line))
    for path in sorted((ROOT / "tests" / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line) if line.strip() else {}
            if isinstance(obj.get("command"), str):
                out.append((f"corpus:{path.name}", obj["command"]))
    return out


def command_set() -> list[tuple[str, str]]:
    """The whole set, de-duplicated by command (first origin kept); no NUL bytes (argv cannot hold them)."""
    seen: dict[str, str] = {}
    for origin, cmd in from_corpora() + generated():
        if "\0" not in cmd and cmd not in seen:
            seen[cmd] = origin
    return [(origin, cmd) for cmd, origin in seen.items()]


def sandbox_env(out: Path) -> dict[str, str]:
    """An environment with an empty HOME and XDG dirs under `out` (no rules, no config)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RTK_", "CLAUDE_", "XDG_"))}
    home = out / "home"
    for sub in ("home", "config", "data", "cache", "state", "cwd"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(out / "config"), XDG_DATA_HOME=str(out / "data"),
               XDG_CACHE_HOME=str(out / "cache"), XDG_STATE_HOME=str(out / "state"))
    return env


def run_rtk(rtk: str, cmds: list[str], env: dict[str, str], out: Path, hooks: dict[str, list[str]]) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk rewrite CMD` for every command; answers are cached in `<out>/rtk_cache*.jsonl`
    (the binary starts in ~70 ms, so a full run takes minutes the first time). `hooks` (exclude_commands,
    transparent_prefixes) goes to RTK's `[hooks]` table in `$XDG_CONFIG_HOME/rtk/config.toml`."""
    config = out / "config" / "rtk" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in hooks.items())
    config.write_text("[hooks]\n" + lines if hooks else "", "utf-8")
    tag = "-" + hashlib.sha256(json.dumps(hooks, sort_keys=True).encode()).hexdigest()[:12] if hooks else ""
    cache_path = out / f"rtk_cache{tag}.jsonl"
    cache: dict[str, tuple[int, str]] = {}
    if cache_path.is_file():
        for line in cache_path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            cache[obj["cmd"]] = (obj["exit"], obj["stdout"])

    def one(cmd: str) -> tuple[int, str]:
        proc = subprocess.run([rtk, "rewrite", cmd], capture_output=True, env=env, cwd=out / "cwd", timeout=30)
        return proc.returncode, proc.stdout.decode("utf-8", "surrogateescape")

    missing = [cmd for cmd in dict.fromkeys(cmds) if cmd not in cache]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, missing))
    with open(cache_path, "a", encoding="utf-8") as handle:
        for cmd, (code, text) in zip(missing, answers):
            cache[cmd] = (code, text)
            handle.write(json.dumps({"cmd": cmd, "exit": code, "stdout": text}) + "\n")
    return [cache[cmd] for cmd in cmds]


def run_ours(
    cmds: list[str], env: dict[str, str], cwd: Path, policies: list[str], hooks: dict[str, list[str]]
) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk-policy rewrite --batch -` for every command, `hooks` as config overrides."""
    extra_config = {"config": hooks} if hooks else {}
    lines = "".join(json.dumps({"command": c, **extra_config}) + "\n" for c in cmds)
    extra = [arg for path in policies for arg in ("--policies", path)]
    proc = subprocess.run([sys.executable, "-m", "rtk_policy", "rewrite", "--batch", "-", "--jobs", "2", *extra],
                          input=lines, capture_output=True, text=True, env=env, cwd=cwd, check=True)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    return [(a.get("exit", -1), a.get("stdout", a.get("error", ""))) for a in answers]


_OPS = re.compile(r"\s*(;;|&&|\|\||\|&|[;&|])\s*")


def _respaced(text: str) -> str:
    return _OPS.sub(r" \1 ", text).strip()


#: (class, test of (cmd, rtk answer, our answer)), first match wins. "b": RTK 1.1.0 differs from the
#: reference (ours follows it); "design": our shipped security packs; "c": the reference is silent.
CLASSES: tuple[tuple[str, object], ...] = (
    ("design: security pack asked or denied", lambda c, t, o: o[0] == 2 or (o[0] == 3 and o[1] == c)),
    ("b §3.5 step 9 CR/FF/NBSP are word bytes", lambda c, t, o: re.search("[\r\f\v\u00a0]", c)),
    ("b §3.3 separators kept byte for byte", lambda c, t, o: t[0] == o[0] and t[1] != o[1]
     and _respaced(t[1]) == _respaced(o[1])),
    ("b §3.2 newlines kept", lambda c, t, o: "\n" in c and t[0] == o[0]
     and " ".join(t[1].split()) == " ".join(o[1].split())),
    ("b §3.5 step 7 bash/sh -c not rewritten", lambda c, t, o: re.search(r"\b(ba|z)?sh -c\b", c)),
    ("b §3.3 compounds, subshells and reserved words walked", lambda c, t, o: t[0] == 1 and o[0] == 3
     and re.search(r"(^|[;&|(]\s*)(if|while|until|for|case|\(|\[\[|\(\()|\besac\b", c)),
    ("b §3.5 step 1 env options / += assignments kept", lambda c, t, o: t[0] == 1
     and re.search(r"\benv -|\+=", c)),
    ("b/c §3.3 `!` not stepped over", lambda c, t, o: re.search(r"(^|[;&|]\s*)! ", c)),
    ("b public RTK test expects our answer", lambda c, t, o: _public_expected(c) in (o[1] or None,)),
    ("b §3.9 subcommand outside the rule table", lambda c, t, o: t[0] == 3 and o[0] == 1
     and re.search(r"dotnet build-server|mvn [\w-]+:\w", c)),
    ("b §3.5 step 4 assignment after a wrapper refuses", lambda c, t, o: t[0] == 3 and o[0] == 1
     and re.search(r"\b(timeout \S+|nice|exec|noglob|uv run) +\w+\+?=", c)),
    ("c §3.5 step 12 TOML-filter program set (1.1.0 vs newest)", lambda c, t, o: any(
        (f"rtk {p}" in t[1]) != (f"rtk {p}" in o[1]) for p in _FILTERED)),
    ("c bash syntax error (bash -n)", lambda c, t, o: not _bash_parses(c)),
)


#: programs whose TOML output filter exists in one of RTK 1.1.0 and our list (policies/rtk-rewrite.yaml)
_FILTERED = ("ssh", "stat", "turbo", "bats", "bazel", "az", "journalctl", "jj", "jq", "just", "mise", "nx",
             "gitleaks", "ollama", "conda", "argocd", "gsutil", "pandoc", "eza", "expo", "adb")


@functools.lru_cache(maxsize=None)
def _public_cases() -> dict[str, str | None]:
    if not PUBLIC.is_file():
        return {}
    data = json.loads(PUBLIC.read_text(encoding="utf-8"))
    return {c["cmd"]: c["expected"] for c in data["rewrite"]
            if c.get("layer") == "registry" and not c.get("excluded") and not c.get("transparent_prefixes")}


def _public_expected(cmd: str) -> object:
    return _public_cases().get(cmd, "<absent>")


def _bash_parses(cmd: str) -> bool:
    return subprocess.run(["bash", "-n", "-c", cmd], capture_output=True).returncode == 0


def classify(cmd: str, theirs: tuple[int, str], ours: tuple[int, str]) -> str:
    """The first class of CLASSES a difference falls in, or "unclassified"."""
    for name, test in CLASSES:
        if test(cmd, theirs, ours):  # type: ignore[operator]
            return name
    return "unclassified"


def main(argv: list[str] | None = None) -> int:
    """Build the set, run both sides, write the differences, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtk", default="/work/peers/rtk/bin/rtk")
    parser.add_argument("--out", default="/tmp/rtk-oracle")
    parser.add_argument("--policies", action="append", default=[],
                        help="policy file/folder for rtk-policy (repeatable; default: the shipped search path;"
                        " policies/rtk-rewrite.yaml alone isolates the rewrite engine from the security packs)")
    parser.add_argument("--exclude", action="append", default=[],
                        help="an exclude_commands entry given to both sides (repeatable)")
    parser.add_argument("--prefix", action="append", default=[],
                        help="a transparent_prefixes entry given to both sides (repeatable)")
    parser.add_argument("--claude-settings", default="",
                        help="a Claude Code settings.json copied to <out>/cwd/.claude/ for both sides (use a"
                        " separate --out per settings file: the RTK answer cache is per --out)")
    parser.add_argument("--only", default="", help="keep only commands whose origin starts with this")
    args = parser.parse_args(argv)
    out = Path(args.out)
    env = sandbox_env(out)
    settings = out / "cwd" / ".claude" / "settings.json"
    if args.claude_settings:
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(Path(args.claude_settings).read_text(encoding="utf-8"), encoding="utf-8")
    elif settings.exists():
        settings.unlink()
    entries = [e for e in command_set() if e[0].startswith(args.only)]
    cmds = [cmd for _, cmd in entries]
    hooks = {key: value for key, value in (("exclude_commands", args.exclude),
                                           ("transparent_prefixes", args.prefix)) if value}
    theirs = run_rtk(args.rtk, cmds, env, out, hooks)
    ours = run_ours(cmds, env, out / "cwd", [str(Path(p).resolve()) for p in args.policies], hooks)
    with open(out / "commands.jsonl", "w", encoding="utf-8") as handle:
        for (origin, cmd), t, o in zip(entries, theirs, ours):
            handle.write(json.dumps({"origin": origin, "cmd": cmd, "rtk": t, "ours": o}) + "\n")
    diffs = [(e, t, o) for e, t, o in zip(entries, theirs, ours) if t != o]
    with open(out / "diff.jsonl", "w", encoding="utf-8") as handle:
        for (origin, cmd), t, o in diffs:
            handle.write(json.dumps({"origin": origin, "cmd": cmd, "rtk": t, "ours": o,
                                     "class": classify(cmd, t, o)}) + "\n")
    by_class = collections.Counter(classify(cmd, t, o) for (_, cmd), t, o in diffs)
    print(f"commands: {len(cmds)}  differences: {len(diffs)}")
    for name, count in by_class.most_common():
        print(f"  {count:5d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
