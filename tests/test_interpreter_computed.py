"""Interpreter scripts that hand a shell-spawning call something other than one literal (issue 18,
point 3): a command built at run time is unattestable and asked, saying why; a list of literals
is the argv it runs, judged like that command."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.shell.scripts import actions

PACK = Path(__file__).resolve().parents[1] / "policies" / "security-baseline.yaml"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(policies=load_policy_set([str(PACK)]), config=Config(audit_enabled=False))


@pytest.mark.parametrize(
    "text",
    [
        "perl -e 'my $c=\"rm -rf /\"; system $c'",
        "perl -e 'exec @ARGV'",
        "python3 -c \"import os; os.system('r'+'m -rf /')\"",
        "python3 -c 'import os; os.system(f\"rm -rf {p}\")'",
        "python3 -c 'import os; os.system(\"rm -rf {}\".format(p))'",
        "python3 -c 'import os; os.system(\"rm -rf %s\" % p)'",
        "python3 -c 'import subprocess; subprocess.run([\"ls\"] + args)'",
        "perl -e 'system \"rm -rf \" . $ENV{X}'",
        "php -r 'system($cmd);'",
        'node -e \'require("child_process").execSync("rm -rf " + dir)\'',
        "ruby -e 'cmd = ARGV[0]; system cmd' 'rm -rf /'",
        "ruby -e 'system cmd'",
        "ruby -e 'exec cmd'",
        "ruby -e 'system ARGV[0]'",
        "ruby -e 'system ENV[\"CMD\"]'",
        "ruby -e 'system *ARGV'",
        "ruby -e 'spawn cmd, out: :err'",
        "ruby -e 'Kernel.exec cmd if ok'",
        "ruby -e 'IO.popen cmd'",
        "ruby -e 'x = `#{cmd}`'",
        "ruby -e 'x = `#{ARGV[0]}`' 'rm -rf /'",
        "ruby -e 'system \"rm -rf #{dir}\"'",
        "ruby -e 'system(\"#{cmd}\")'",
        "ruby -e '%x{#{cmd}}'",
    ],
)
def test_a_command_built_at_run_time_is_asked_saying_why(engine, text):
    decision = engine.decide(text, engine.context())
    assert decision.verdict == "ask", (text, decision.rule_ids)
    assert any("builds at run time" in reason for reason in decision.reasons), decision.reasons


@pytest.mark.parametrize(
    "text",
    [
        'perl -e \'system "rm", "-rf", "/"\'',
        'perl -e \'system("rm", "-rf", "/")\'',
        'ruby -e \'system("rm", "-rf", "/")\'',
        'ruby -e \'system "rm -rf /"\'',
        'ruby -e \'exec "rm -rf /"\'',
        "ruby -e '`rm -rf /`'",
        "ruby -e 'system \"rm -rf /\" if true'",
        'python3 -c \'import subprocess; subprocess.run(["rm","-rf","/"], check=True)\'',
        'node -e \'require("child_process").execFileSync("rm", ["-rf","/"])\'',
        'node -e \'require("child_process").spawnSync("rm", ["-rf", "/"], {stdio: "inherit"})\'',
        'node -e \'require("child_process").execSync("rm -rf /", {stdio: "inherit"})\'',
    ],
)
def test_a_list_of_literals_is_judged_as_the_argv_it_runs(engine, text):
    assert engine.decide(text, engine.context()).verdict == "deny", text


@pytest.mark.parametrize(
    "text",
    [
        "perl -e 'print \"the system is up\\n\"'",
        "perl -e 'system \"ls\"'",
        "python3 -c 'import os; os.system(\"ls -la\")'",
        'python3 -c \'import subprocess; subprocess.run(["ls", "-la"], check=True)\'',
        'node -e \'require("child_process").spawnSync("ls", ["-la"])\'',
        'node -e \'require("child_process").execSync("ls", {stdio: "inherit"})\'',
        "python3 -c 'print(\"hello\")'",
        "ruby -e 'puts \"the system is up\"'",
        "ruby -e 'system \"ls\"'",
        "ruby -e 'puts \"#{1 + 1}\"'",
        "ruby -e 'x = `ls`; puts x'",
        "ruby -e 'def system_info; end; system_info'",
    ],
)
def test_safe_neighbours_give_no_opinion(engine, text):
    assert engine.decide(text, engine.context()).verdict == "none", text


@pytest.mark.parametrize(
    ("lang", "code", "shell", "argv", "unknown"),
    [
        ("pl", 'system "rm", "-rf", "/";', [], [["rm", "-rf", "/"]], False),
        ("pl", "system $c", [], [], True),
        ("pl", 'system "ls"; print 1', ["ls"], [], False),
        ("py", "os.system('r' + 'm')", [], [], True),
        ("py", "os.system('ls')", ["ls"], [], False),
        ("js", 'execFile("rm", ["-rf", "/"], {cwd: "."})', [], [["rm", "-rf", "/"]], False),
        ("js", 'exec("ls", {cwd: "."})', ["ls"], [], False),
        ("py", "subprocess.run(['ls'] + more)", [], [], True),
        ("rb", "system cmd", [], [], True),
        ("rb", "exec ARGV[0] if go", [], [], True),
        ("rb", 'system "ls" unless done', ["ls"], [], False),
        ("rb", 'puts "the system is up"', [], [], False),
        ("rb", "x = `#{cmd}`", [], [], True),
        ("rb", "x = `ls`", ["ls"], [], False),
        ("rb", 'system "rm -rf #{dir}"', [], [], True),
    ],
)
def test_actions_per_language(lang, code, shell, argv, unknown):
    found = actions(lang, code)
    assert (found.shell, found.argv, found.unknown_spawn) == (shell, argv, unknown)
