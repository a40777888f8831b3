"""The hook service: one PreToolUse call answered (JSON in, at most one JSON line out), audited.

The one path the CLI's `rtk-policy hook`, the resident server and the thin client's in-process
fallback all call: request → engine → the agent's answer → the audit record. Never a traceback,
never junk on stdout, always exit 0. Bad input and internal errors get a one-line stderr message
and the fail mode's answer (`open`: no opinion, `closed`: ask, `deny`: deny).
"""

from __future__ import annotations

import io
import os
import sys
import time

from rtk_policy.agents import agent_module, detect_agent
from rtk_policy.agents.common import BadRequest, HookRequest
from rtk_policy.agents.hook_input import decode_payload, read_stdin
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any, TypeVar

    from rtk_policy.agents.protocol import AgentProtocol
    from rtk_policy.config.load import Config
    from rtk_policy.decision import Decision
    from rtk_policy.engine.pipeline import Outcome
    from rtk_policy.hook.interfaces import AuditedRequest, FolderFacts, HookEngine
    from rtk_policy.policy.model import Context

    _A = TypeVar("_A")
    #: `hook_input.decode_payload`'s answer: the payload (None when unreadable) and a problem
    Decoded = tuple[dict[str, Any] | None, str]

    #: (request, outcome, decision) of a call whose engine decision was answered without an error
    Decided = tuple[HookRequest, Outcome, Decision]



@record.frozen
class HookOptions:
    """What a hook call is told besides its payload: the agent (None: detect it from the payload),
    the policy paths, backend and config file that replace the defaults (None: the defaults), and
    whether it is a machine-wide install's hook (`system`: the managed layer only, see
    `engine.pipeline.load_engine`), and `host_pid`, a process below the agent's (None: this one;
    0: unknown), whose ancestors are searched for Claude Code's command line
    (`settings.claude_cli`)."""

    agent: str | None = None
    policies: list[str] | None = None
    backend: str | None = None
    config: str | None = None
    system: bool = False
    host_pid: int | None = None


class _Hook:
    """The state of one hook call: the chosen protocol, the engine once loaded, what was
    answered."""

    def __init__(
        self,
        options: HookOptions,
        stdout: IO[str],
        stderr: IO[str],
        engine: HookEngine | None,
        decoded: Decoded | None = None,
    ) -> None:
        self.options = options
        self.decoded = decoded  #: `decode_payload`'s answer for stdin, when the caller has it
        self.stdout = stdout
        self.stderr = stderr
        self.engine = engine
        self.config: Config | None = engine.config if engine is not None else None
        self.module: AgentProtocol = agent_module(options.agent or "claude")
        self.request: HookRequest | None = None
        self.rules_seen = False  #: the agent's command-line rules were read (`host_process`)
        self.started = time.perf_counter_ns()
        self.answered = False
        #: (request, outcome, decision) once the engine's decision was answered without any error
        self.decided: Decided | None = None

    # -- the flow ---------------------------------------------------------------------------------

    def handle(self, stdin: IO[Any] | None) -> None:
        """Read, parse, decide, answer."""
        if self.decoded is not None:
            (payload, decode_problem), problem = self.decoded, ""
        else:
            data, problem = read_stdin(stdin)
            payload, decode_problem = decode_payload(data) if data or not problem else (None, "")
        if payload is None:
            self.bad_input(problem or decode_problem)
            return
        if not self.options.agent:
            self.module = agent_module(detect_agent(payload))
        try:
            self.request = self.module.parse_request(payload)
        except BadRequest as error:
            self.bad_input(str(error))
            return
        if self.request is None:
            self.emit(self.module.pass_through(payload))
            return
        self.decide(self.request)

    def decide(self, request: HookRequest) -> None:
        """Run the engine on the request's command (or tool call) and answer with the agent's
        rendering."""
        engine = self.load_engine(request)
        context = self.context(engine, request)
        if request.tool is not None:
            outcome = engine.evaluate_tool(request.tool, context)
        else:
            outcome = engine.evaluate(request.command, context)
        decision = self.for_host(outcome.decision, request)
        if request.tool is None:
            self.emit(engine.rendered(self.module, decision, request))
        else:
            self.emit(self.module.render(decision, request))
        error = decision.error
        if error:
            self.say(f"policy error, fail mode applied: {error}")
        self.audit(outcome=outcome, decision=decision)
        if not error:
            self.decided = (request, outcome, decision)

    def for_host(self, decision: Decision, request: HookRequest) -> Decision:
        """The decision with its rewrite dropped where it must not reach the agent (`gating`)."""
        if decision.rewritten is None or decision.error:
            return decision
        from rtk_policy.engine.gating import host_decision

        return host_decision(decision, self.config, request.agent, self.rules_seen)

    def load_engine(self, request: HookRequest) -> HookEngine:
        """The injected engine, or the real one loaded for the request's folder."""
        if self.engine is None:
            from rtk_policy.engine.pipeline import load_engine

            self.engine = load_engine(
                policy_paths=self.options.policies,
                backend=self.options.backend,
                config_path=self.options.config,
                cwd=request.cwd if request.cwd and os.path.isdir(request.cwd) else None,
                system=self.options.system,
            )
            self.config = self.engine.config
        return self.engine

    def context(self, engine: HookEngine, request: HookRequest) -> Context:
        """The policy `Context` of the request: agent fields, the agent's own rules (`claude`)."""
        facts = engine.folder_facts  # the resident server's stat-checked memo, or None
        fields: dict[str, Any] = {
            "agent": request.agent,
            "cwd": request.cwd,
            "project_dir": self.project_dir(request, facts),
            "permission_mode": request.permission_mode,
            "session_id": request.session_id,
            "tool_name": request.tool_name,
            "tool_input": tuple(request.tool_input.items()),
        }
        from rtk_policy.settings.agent_rules import CLI_RULE_AGENTS, load_agent_rules

        load = facts.agent_rules if facts is not None else load_agent_rules
        deny, ask, allow, keep = load(request.agent, request.cwd or None, self.stderr)
        if request.agent in CLI_RULE_AGENTS:
            from rtk_policy.settings.agent_rules import command_line_rules

            cli = command_line_rules(request.agent, self.options.host_pid, self.stderr)
            self.rules_seen = cli.seen
            deny, ask, allow = (*deny, *cli.deny), (*ask, *cli.ask), (*allow, *cli.allow)
            keep = (*keep, *cli.keep)
        fields.update(claude_deny=deny, claude_ask=ask, claude_allow=allow)
        if keep:  # commands the host judges itself by rules we cannot read: never rewritten
            fields["exclude_commands"] = (*engine.config.exclude_commands, *keep)
        return engine.context(**fields)

    @staticmethod
    def project_dir(request: HookRequest, facts: FolderFacts | None = None) -> str:
        """`$CLAUDE_PROJECT_DIR` for Claude Code, else the Claude project folder of the cwd (asked
        of `facts`, a `serve_memo.FolderFacts`, when given)."""
        from rtk_policy.settings.claude_rules import agent_project_dir

        find = facts.claude_project_dir if facts is not None else None
        return agent_project_dir(request.agent, request.cwd, find)

    # -- failures ---------------------------------------------------------------------------------

    def fail_mode(self) -> str:
        """The fail mode of the trusted config layers, made stricter (never looser) by
        `$RTK_POLICY_FAIL`; `closed` when even the config cannot be read."""
        from rtk_policy.config.load import BROKEN_FAIL_MODE, effective_fail_mode, strictest

        if self.config is None:
            try:
                from rtk_policy.config.load import load_config

                cwd = self.request.cwd if self.request is not None else ""
                folder = cwd if cwd and os.path.isdir(cwd) else None
                layers = None
                if self.options.system:
                    from rtk_policy.engine.layered import system_layers

                    layers = system_layers()  # the managed layer only
                self.config = load_config(self.options.config, cwd=folder, layers=layers)
            except Exception as error:  # noqa: BLE001 - a broken config must not break the answer
                self.say(f"config not readable ({error})")
                return strictest(BROKEN_FAIL_MODE, effective_fail_mode(None))
        return effective_fail_mode(self.config)

    def bad_input(self, message: str) -> None:
        """Answer input we cannot judge: a stderr line and the fail mode's answer."""
        self.say(message)
        mode = self.fail_mode()
        self.emit(self.module.fail_answer(mode, message, self.request))
        self.audit(error=f"bad input: {message}")

    def internal_error(self, error: BaseException) -> None:
        """Answer after an unexpected exception: a stderr line and the fail mode's answer."""
        message = f"{type(error).__name__}: {error}".strip().splitlines()[0][:500]
        mode = self.fail_mode()
        self.say(f"internal error, fail mode {mode!r} applied: {message}")
        self.emit(self.module.fail_answer(mode, message, self.request))
        self.audit(error=f"internal error: {message}")

    # -- output -----------------------------------------------------------------------------------

    def emit(self, line: str | None) -> None:
        """Write the answer (at most once per call)."""
        if self.answered:
            return
        self.answered = True
        if line is None:
            return
        data = line.replace("\n", " ") + "\n"
        buffer = getattr(self.stdout, "buffer", None)
        if buffer is not None:
            buffer.write(data.encode("utf-8"))
            buffer.flush()
        else:
            self.stdout.write(data)
            self.stdout.flush()

    def say(self, message: str) -> None:
        """One line on stderr."""
        try:
            self.stderr.write(f"rtk-policy hook: {' '.join(message.split())}\n")
            self.stderr.flush()
        except Exception:  # noqa: BLE001 - a closed stderr must not break the answer
            pass

    def audit(
        self, outcome: Outcome | None = None, decision: Decision | None = None, error: str = ""
    ) -> None:
        """Record the call in the audit log (`rtk_policy.audit.log` owns the record format)."""
        record_call(
            self.config,
            self.request,
            outcome,
            decision,
            (time.perf_counter_ns() - self.started) // 1000,
            error,
            agent=self.module.NAME,
        )


def record_call(
    config: Config | None,
    request: AuditedRequest | None,
    outcome: Outcome | None,
    decision: Decision | None,
    total_us: int,
    error: str = "",
    agent: str = "",
) -> None:
    """Write the audit record of one hook call (`agent` names it when there is no `request`).

    Never raises: the audit log must never break the answer.
    """
    try:
        from rtk_policy.audit import log as audit
        from rtk_policy.config.load import Config

        fields = {
            "session_id": request.session_id if request else "",
            "tool_use_id": request.tool_use_id if request else "",
            "cwd": request.cwd if request else "",
            "command": request.command if request else "",
        }
        audit.record(
            config if config is not None else Config(),
            agent=request.agent if request else agent,
            request=fields,
            outcome=outcome,
            decision=decision,
            total_us=total_us,
            error=error,
        )
    except Exception:  # noqa: BLE001 - the audit log must never break the answer
        pass


def answer_stream(
    options: HookOptions,
    stdin: IO[Any],
    stdout: IO[str],
    stderr: IO[str],
    engine: HookEngine | None = None,
    decoded: Decoded | None = None,
) -> None:
    """Answer one hook call read from `stdin` on `stdout`; `engine` replaces the loaded one (tests
    or the resident server); `decoded` is `decode_payload`'s answer for stdin when the caller
    already has it (stdin is then not read). Never raises."""
    _run(_Hook(options, stdout, stderr, engine, decoded), stdin)


def _run(hook: _Hook, stdin: IO[Any], shared: bool = False) -> None:
    """Answer the hook call read from `stdin`; stray prints go to its stderr, but in a `shared`
    process (see `answer_payload`)."""
    try:
        _printing_to(hook.stderr, hook.handle, stdin, shared)  # stray prints never reach stdout
    except Exception as error:  # noqa: BLE001 - the hook answers whatever happens
        try:
            _printing_to(hook.stderr, hook.internal_error, error, shared)
        except Exception:  # noqa: BLE001
            pass


def _printing_to(
    stream: IO[str], call: Callable[[_A], None], argument: _A, shared: bool = False
) -> None:
    """`call(argument)` with `sys.stdout` set to `stream` (what `contextlib.redirect_stdout` does,
    without importing contextlib: ~1 ms of a cold hook); in a `shared` process, with `sys.stdout`
    left alone."""
    if shared:
        call(argument)
        return
    saved = sys.stdout
    sys.stdout = stream
    try:
        call(argument)
    finally:
        sys.stdout = saved


@record.frozen(eq=False)
class HookAnswer:
    """What one hook call wrote: `stdout` (the protocol answer, or "") and `stderr` (diagnostics);
    `decided` is (request, outcome, decision) when the engine's decision was answered without an
    error (None for bad input, a tool passed through, a failure)."""

    stdout: str
    stderr: str
    decided: Decided | None = None


def answer_payload(
    payload: bytes,
    agent: str | None,
    engine: HookEngine | None = None,
    decoded: Decoded | None = None,
    host_pid: int | None = None,
    shared: bool = False,
) -> HookAnswer:
    """The hook's answer to raw `payload` bytes for `agent` (None: detect), as `run` would write it.

    Used by the resident server and the thin client's in-process fallback. `decoded` is
    `decode_payload(payload)` when the caller has already parsed it (only for a payload within
    `STDIN_LIMIT`). `host_pid`: see `HookOptions` (0: unknown, e.g. an http request). `shared`:
    the process answers other calls at the same time (the resident server's threads), so
    `sys.stdout`, which they all share, is not pointed at this call's stderr (the answer is
    returned, never printed: a stray print goes to the process's own stdout, into no answer).
    """
    out, err = io.StringIO(), io.StringIO()
    hook = _Hook(HookOptions(agent=agent or None, host_pid=host_pid), out, err, engine, decoded)
    _run(hook, io.BytesIO(payload), shared)
    return HookAnswer(out.getvalue(), err.getvalue(), hook.decided)
