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
import json
import os
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
)


def _split_bases() -> list[str]:
    return [b.strip() for b in BASES.split("|") if b.strip()]


def _path_variants(base: str) -> list[tuple[str, str]]:
    """A full-path and a quoted spelling of the program word."""
    head, _, rest = base.partition(" ")
    tail = f" {rest}" if rest else ""
    out = [("full-path", f"/usr/bin/{head}{tail}")] if "/" not in head else []
    return out + [("quoted-program", f"'{head}'{tail}"), ("dq-program", f'"{head}"{tail}')]


def generated() -> list[tuple[str, str]]:
    """(variant, command) pairs of the generated part of the set."""
    out = []
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


def run_rtk(rtk: str, cmds: list[str], env: dict[str, str], out: Path) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk rewrite CMD` for every command; answers are cached in `<out>/rtk_cache.jsonl`
    (the binary starts in ~70 ms, so a full run takes minutes the first time)."""
    cache_path = out / "rtk_cache.jsonl"
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


def run_ours(cmds: list[str], env: dict[str, str], cwd: Path, policies: list[str]) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk-policy rewrite --batch -` for every command."""
    lines = "".join(json.dumps({"command": c}) + "\n" for c in cmds)
    extra = [arg for path in policies for arg in ("--policies", path)]
    proc = subprocess.run([sys.executable, "-m", "rtk_policy", "rewrite", "--batch", "-", "--jobs", "2", *extra],
                          input=lines, capture_output=True, text=True, env=env, cwd=cwd, check=True)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    return [(a.get("exit", -1), a.get("stdout", a.get("error", ""))) for a in answers]


def main(argv: list[str] | None = None) -> int:
    """Build the set, run both sides, write the differences, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtk", default="/work/peers/rtk/bin/rtk")
    parser.add_argument("--out", default="/tmp/rtk-oracle")
    parser.add_argument("--policies", action="append", default=[],
                        help="policy file/folder for rtk-policy (repeatable; default: the shipped search path;"
                        " policies/rtk-rewrite.yaml alone isolates the rewrite engine from the security packs)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    env = sandbox_env(out)
    entries = command_set()
    cmds = [cmd for _, cmd in entries]
    theirs = run_rtk(args.rtk, cmds, env, out)
    ours = run_ours(cmds, env, out / "cwd", [str(Path(p).resolve()) for p in args.policies])
    with open(out / "commands.jsonl", "w", encoding="utf-8") as handle:
        for (origin, cmd), t, o in zip(entries, theirs, ours):
            handle.write(json.dumps({"origin": origin, "cmd": cmd, "rtk": t, "ours": o}) + "\n")
    diffs = [(e, t, o) for e, t, o in zip(entries, theirs, ours) if t != o]
    with open(out / "diff.jsonl", "w", encoding="utf-8") as handle:
        for (origin, cmd), t, o in diffs:
            handle.write(json.dumps({"origin": origin, "cmd": cmd, "rtk": t, "ours": o}) + "\n")
    by_origin = collections.Counter(origin for (origin, _), _t, _o in diffs)
    print(f"commands: {len(cmds)}  differences: {len(diffs)}")
    for origin, count in by_origin.most_common():
        print(f"  {count:5d}  {origin}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
