"""How to start each real agent CLI offline against the fake model, headless, in a sandbox.

One `Agent` per CLI: its rtk-policy agent name, the model API it speaks, where the install script
put it, the config it needs before `rtk-policy init` (`setup`) and after it (`after_init`: Codex's
hook trust), and the command line of one headless run. `Agent.run` starts a fresh `FakeModel`
that asks for the given command, runs the CLI in the given repository and returns a `Run`.

Offline starts (agents-real.md): Claude Code `ANTHROPIC_BASE_URL`; Codex a custom
`model_provider` with `wire_api = "responses"`; Gemini CLI `GOOGLE_GEMINI_BASE_URL` with
`security.auth.selectedType = "gemini-api-key"` and a trusted folder; Copilot CLI BYOK
(`COPILOT_OFFLINE`, `COPILOT_PROVIDER_BASE_URL`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import codex_trust
from .fake_model import FakeModel
from .sandbox import Sandbox

PROMPT = "Run the test command, then stop."


@dataclass
class Run:
    """What one headless CLI run did: its exit, output, time, and what the model saw."""

    agent: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    model: FakeModel
    debug: str = ""
    timed_out: bool = False

    @property
    def tool_result(self) -> str:
        """The tool result text(s) the model got back for its shell call."""
        return "\n".join(self.model.tool_results)

    def describe(self) -> str:
        """A compact account for assertion messages."""
        ended = "timed out" if self.timed_out else f"exit {self.returncode}"
        return (
            f"{self.agent} {ended} in {self.seconds:.1f}s; {self.model.describe()}"
            f"\n--- stdout (tail) ---\n{self.stdout[-1500:]}\n--- stderr (tail) ---\n"
            f"{self.stderr[-1500:]}"
        )


@dataclass
class Agent:
    """One agent CLI (see the module docstring); `permissive` are the flags of a headless run
    that runs every command the hook does not stop (the agent's own yes-to-all)."""

    name: str
    api: str
    program: str
    permissive: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    def executable(self, clis: Path) -> Path:
        """The CLI's launcher as `install_clis.sh` installs it."""
        return clis / self.name / "node_modules" / ".bin" / self.program

    def setup(self, sandbox: Sandbox) -> None:
        """The agent's own configuration, written before `rtk-policy init` (as a user has it)."""

    def after_init(self, sandbox: Sandbox) -> None:
        """What a user does after `init` for the hook to run (nothing, except for Codex)."""

    def argv(self, sandbox: Sandbox, model: FakeModel, flags: tuple[str, ...]) -> list[str]:
        """The arguments after the executable."""
        raise NotImplementedError

    def run_env(self, sandbox: Sandbox, model: FakeModel) -> dict[str, str]:
        """The environment of a run against `model`."""
        return sandbox.env(**self.env)

    def run(
        self,
        clis: Path,
        sandbox: Sandbox,
        work: Path,
        command: str,
        flags: tuple[str, ...] | None = None,
        tool_args: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> Run:
        """Run the CLI headless in `work`; the model asks for `command` once.

        `flags` default to the permissive ones; `tool_args` are more arguments of the shell call.
        A run still going after `timeout` seconds is killed with its process group and marked
        `timed_out` (Gemini CLI waits forever for an approval a headless run cannot give).
        """
        with FakeModel(self.api, command, **(tool_args or {})) as model:
            flags = self.permissive if flags is None else flags
            argv = [str(self.executable(clis)), *self.argv(sandbox, model, flags)]
            started = time.monotonic()
            process = subprocess.Popen(
                argv,
                cwd=work,
                env={**self.run_env(sandbox, model), **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            timed_out = False
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(process.pid, signal.SIGKILL)
                stdout, stderr = process.communicate()
            seconds = time.monotonic() - started
        return Run(
            self.name,
            argv,
            process.returncode,
            stdout,
            stderr,
            seconds,
            model,
            self.debug_log(sandbox),
            timed_out,
        )

    def debug_log(self, sandbox: Sandbox) -> str:
        """The CLI's debug log of the last run, where it writes one."""
        return ""

    @contextlib.contextmanager
    def own_deny_rule(self, sandbox: Sandbox, prefix: str) -> Iterator[tuple[str, ...]]:
        """The agent's own rule denying commands that start with `prefix` (its words), in force
        while the context lasts; yields the flags of a permissive run with the rule."""
        raise NotImplementedError
        yield ()


class Claude(Agent):
    """Claude Code: `claude -p PROMPT --output-format stream-json --verbose`, default mode."""

    def argv(self, sandbox: Sandbox, model: FakeModel, flags: tuple[str, ...]) -> list[str]:
        """`-p` with stream-json output and a debug file (hook statuses and durations)."""
        mode = () if "--permission-mode" in flags else ("--permission-mode", "default")
        debug = sandbox.root / "claude-debug.txt"
        debug.unlink(missing_ok=True)
        return [
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--verbose",
            "--debug-file",
            str(debug),
            *mode,
            *flags,
        ]

    def run_env(self, sandbox: Sandbox, model: FakeModel) -> dict[str, str]:
        """The Anthropic endpoint is the fake model; no telemetry, no updates."""
        return sandbox.env(
            ANTHROPIC_BASE_URL=model.url,
            ANTHROPIC_API_KEY="sk-ant-e2e-fake",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            **self.env,
        )

    @contextlib.contextmanager
    def own_deny_rule(self, sandbox: Sandbox, prefix: str) -> Iterator[tuple[str, ...]]:
        """A command-line deny rule, `--disallowedTools 'Bash(PREFIX:*)'`."""
        yield (*self.permissive, "--disallowedTools", f"Bash({prefix}:*)")

    def debug_log(self, sandbox: Sandbox) -> str:
        """`--debug-file` of the last run."""
        path = sandbox.root / "claude-debug.txt"
        return path.read_text(errors="replace") if path.exists() else ""


class Codex(Agent):
    """Codex: `codex exec --json PROMPT` with a fake `model_provider`."""

    def codex_home(self, sandbox: Sandbox) -> Path:
        """`$CODEX_HOME` (~/.codex)."""
        return sandbox.home / ".codex"

    def setup(self, sandbox: Sandbox) -> None:
        """config.toml: the fake provider (its URL is set per run with `-c`), no approvals, no
        sandbox; and ~/.profile putting the stub first (Codex runs commands in `bash -lc`)."""
        home = self.codex_home(sandbox)
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            'model = "gpt-e2e"\nmodel_provider = "fake"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n\n[model_providers.fake]\nname = "fake"\n'
            'base_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\nsupports_websockets = false\n'
        )
        (sandbox.home / ".profile").write_text(f'PATH="{sandbox.path()}"\nexport PATH\n')

    def after_init(self, sandbox: Sandbox) -> None:
        """Trust the hooks `init` installed, as the user's review in `/hooks` does."""
        codex_trust.trust_all(self.codex_home(sandbox))

    @contextlib.contextmanager
    def own_deny_rule(self, sandbox: Sandbox, prefix: str) -> Iterator[tuple[str, ...]]:
        """An execpolicy rule, `prefix_rule(pattern=[...], decision="forbidden")` in
        `$CODEX_HOME/rules/e2e.rules`, removed afterwards."""
        rules = self.codex_home(sandbox) / "rules"
        rules.mkdir(exist_ok=True)
        path = rules / "e2e.rules"
        pattern = json.dumps(prefix.split())
        path.write_text(
            f'prefix_rule(pattern={pattern}, decision="forbidden",\n'
            '            justification="e2e: the agent\'s own deny rule")\n'
        )
        try:
            yield self.permissive
        finally:
            path.unlink()

    def argv(self, sandbox: Sandbox, model: FakeModel, flags: tuple[str, ...]) -> list[str]:
        """`exec --json` pointed at this run's model."""
        url = json.dumps(f"{model.url}/v1")
        return [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-c",
            f"model_providers.fake.base_url={url}",
            *flags,
            PROMPT,
        ]

    def run_env(self, sandbox: Sandbox, model: FakeModel) -> dict[str, str]:
        """CODEX_HOME in the sandbox and a fake key."""
        return sandbox.env(
            CODEX_HOME=str(self.codex_home(sandbox)), OPENAI_API_KEY="sk-e2e-fake", **self.env
        )


class Gemini(Agent):
    """Gemini CLI: `gemini -p PROMPT --output-format json` (`--yolo` when permissive)."""

    def setup(self, sandbox: Sandbox) -> None:
        """API-key auth (the base URL alone selects an auth headless runs refuse) and the work
        folder trusted, or `--yolo` is downgraded."""
        folder = sandbox.home / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        (folder / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
        trusted = {str(sandbox.root / "work"): "TRUST_FOLDER"}
        (folder / "trustedFolders.json").write_text(json.dumps(trusted, indent=2) + "\n")

    @contextlib.contextmanager
    def own_deny_rule(self, sandbox: Sandbox, prefix: str) -> Iterator[tuple[str, ...]]:
        """A policy-engine deny rule (`commandPrefix`), loaded with `--policy FILE`."""
        path = sandbox.root / "gemini-deny.toml"
        path.write_text(
            '[[rule]]\ntoolName = "run_shell_command"\n'
            f'commandPrefix = {json.dumps(prefix)}\ndecision = "deny"\npriority = 900\n'
        )
        try:
            yield (*self.permissive, "--policy", str(path))
        finally:
            path.unlink()

    def argv(self, sandbox: Sandbox, model: FakeModel, flags: tuple[str, ...]) -> list[str]:
        """`-p` with JSON output."""
        return ["-p", PROMPT, "--output-format", "json", *flags]

    def run_env(self, sandbox: Sandbox, model: FakeModel) -> dict[str, str]:
        """The Gemini endpoint is the fake model."""
        return sandbox.env(GEMINI_API_KEY="e2e-fake", GOOGLE_GEMINI_BASE_URL=model.url, **self.env)


class Copilot(Agent):
    """Copilot CLI, BYOK offline: `copilot -p PROMPT` (`--allow-all-tools` when permissive)."""

    @contextlib.contextmanager
    def own_deny_rule(self, sandbox: Sandbox, prefix: str) -> Iterator[tuple[str, ...]]:
        """A command-line deny rule, `--deny-tool 'shell(PREFIX)'`."""
        yield (*self.permissive, f"--deny-tool=shell({prefix})")

    def argv(self, sandbox: Sandbox, model: FakeModel, flags: tuple[str, ...]) -> list[str]:
        """`-p`."""
        return ["-p", PROMPT, *flags]

    def run_env(self, sandbox: Sandbox, model: FakeModel) -> dict[str, str]:
        """Offline, the chat-completions endpoint is the fake model."""
        return sandbox.env(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"{model.url}/v1",
            COPILOT_MODEL="gpt-e2e",
            **self.env,
        )


AGENTS: dict[str, Agent] = {
    "claude": Claude("claude", "anthropic", "claude", permissive=("--allowedTools", "Bash")),
    "codex": Codex("codex", "responses", "codex"),
    "gemini": Gemini("gemini", "gemini", "gemini", permissive=("--yolo",)),
    "copilot": Copilot("copilot", "chat", "copilot", permissive=("--allow-all-tools",)),
}
