"""The command set of benchmarks/rtk_oracle.py: the public RTK corpus, tests/corpus, and generated
variants of the reference's rule table (§3.9), wrappers (§3.5), pipelines (§3.4) and multi-line
input
(§3.2). `command_set()` gives (origin, command) pairs, de-duplicated by command."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT.parent / "shared" / "reference" / "rtk_cases_public.json"
#: single probes of finer rules (§3.4 pipes, §3.5 wrappers and normalisation, §3.9 spellings, §3.10)
PROBES = Path(__file__).resolve().parent / "rtk_oracle_probes.txt"

#: base commands: one or more per rule of the reference rule table (§3.9), plus non-rewritable ones
BASES = """
git status|git status -s|git log --oneline -5|git diff HEAD~1|git show HEAD|git add .|git commit -m
"msg"
git checkout main|git push origin main|git pull --rebase|git branch -a|git fetch --all|git stash pop
git worktree list|git -C /tmp status|git --no-pager log|git rebase main|git blame f.rs|yadm status
gh pr list|gh issue view 3|gh run list|gh repo view|gh api repos/x/y|gh release list|gh pr list
--json number
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
golangci-lint run|golangci-lint --color never run ./...|sbt test|sbt compile|sbt tester|bundle
install
bundle exec rspec|bundle exec rubocop|bundle exec rake test|rake test|rails test|bin/rails test
rspec|rubocop|php artisan migrate|php -l x.php|php run-tests.php|phpunit|vendor/bin/phpunit
php vendor/bin/phpunit|phpstan analyse|./vendor/bin/pest|pint|paratest|ecs|aws s3 ls|psql -c
"select 1"
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
    "git log",
    "cargo test",
    "ls -la",
    "find . -name x",
    "tree",
    "diff a b",
    "mypy .",
    "ruff check .",
    "pytest",
    "pip list",
    "go test ./...",
    "golangci-lint run",
    "bundle install",
    "rspec",
    "rubocop",
    "rake test",
    "phpunit",
    "brew install x",
    "composer install",
    "df -h",
    "dotnet build",
    "du -sh",
    "hadolint x",
    "helm list",
    "iptables -L",
    "markdownlint .",
    "mix compile",
    "mvn test",
    "pio run",
    "poetry install",
    "pre-commit run",
    "ps aux",
    "quarto render",
    "shellcheck x",
    "shopify theme push",
    "swift build",
    "systemctl status x",
    "terraform plan",
    "tofu plan",
    "trunk build",
    "yamllint .",
    "wc -l f",
    "liquibase update",
    "ast-grep -p x",
    "grep -rn x .",
    "rg x",
    "eslint .",
    "prettier --check .",
    "next build",
    "docker ps",
    "kubectl get pods",
    "gh pr list",
    "make",
    "npm run build",
    "jj log",
    "cat f",
    "head -5 f",
    "tail -5 f",
    "curl x",
    "aws s3 ls",
    "psql -c x",
    "pnpm list",
    "tsc",
    "jest",
    "vitest",
    "playwright test",
    "uv run pytest",
    "sbt test",
    "gradle build",
    "mvnd test",
    "deno test",
    "bun test",
    "grep -l x .",
    "rg --files",
    "rg -f pats",
    "yadm log",
    "npx eslint .",
    "python -m pytest",
)
CONSUMERS = (
    "head",
    "head -n 3",
    "tail -5",
    "tail -f",
    "tail -F",
    "tail --follow",
    "tail --fo",
    "tail -qF",
    "tail -fn20",
    "cat",
    "cat -n",
    "grep x",
    "grep -l x",
    "rg x",
    "rg -f p",
    "grep --file=p",
    "wc -l",
    "sort",
    "/usr/bin/head",
    "FOO=1 head",
    "head > f",
    "head 2>/dev/null",
    "less",
    "jq .",
    "xargs echo",
    "time -v grep x",
    "timeout 5 grep x",
    "head | tail -1",
    "grep x | head",
    "'head'",
    "tail '-f'",
    "FOO=1 grep x",
    "env grep x",
    "/usr/bin/grep x",
    "command grep x",
    "sudo grep x",
    "nice grep x",
    "nohup grep x",
    "grep -e -l x",
    "grep -fp",
    "rg --file=p",
    "'grep' x",
    "grep x | wc -l",
    "grep x | head -3",
    "rtk grep x",
    "head -5 f",
    "\\head",
    "tail -n +2",
    "cat -A",
    "head -c 5",
)


def _pipes() -> list[tuple[str, str]]:
    out = [("pipes", f"{p} | {c}") for p in PRODUCERS for c in CONSUMERS]
    return out + [("pipes", f"{p} 2>&1 | {c}") for p in PRODUCERS[:12] for c in CONSUMERS]


#: §3.2: lines of multi-line input, joined in pairs by a newline and by CRLF
LINES = (
    "git status",
    "cargo test",
    "ls -la",
    "echo hi",
    "# comment",
    "  git log -3",
    "rtk git status",
    "for x in a; do",
    "done",
    "if true; then",
    "fi",
    "git commit -m 'multi",
    "line'",
    "foo() {",
    "}",
    "git log |",
    "grep feat",
    "git status && # c",
    "",
    "ls; while true; do",
    "cat <<EOF",
    "x=$((1+2))",
    "git status # don't",
    "git log &&",
    "|| ls",
    "{ git status; }",
    "(ls)",
    "echo 'a\rb'",
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
    marks = {
        "<BSNL>": "\\\n",
        "<NL>": "\n",
        "<TAB>": "\t",
        "<CR>": "\r",
        "<FF>": "\f",
        "<NBSP>": "\u00a0",
    }
    out = []
    for line in PROBES.read_text(encoding="utf-8").split("\n")[2:]:
        if not line:
            continue
        for mark, char in marks.items():
            line = line.replace(mark, char)
        out.append(line)
    return out


def generated() -> list[tuple[str, str]]:
    """(variant, command) pairs of the generated part of the set."""
    out = _pipes() + _multiline()
    for probe in _probes():
        out += [
            (f"probe:{name}", template.format(probe))
            for name, template in VARIANTS
            if name in PROBE_VARIANTS
        ]
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
    """The whole set, de-duplicated by command (first origin kept); no NUL bytes (argv cannot hold
    them)."""
    seen: dict[str, str] = {}
    for origin, cmd in from_corpora() + generated():
        if "\0" not in cmd and cmd not in seen:
            seen[cmd] = origin
    return [(origin, cmd) for cmd, origin in seen.items()]
