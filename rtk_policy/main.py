"""The command line: all argparse lives here; each subcommand is a function in
`rtk_policy.commands`, called with the parsed options as typed keyword parameters (never the
argparse namespace).

Subcommand modules are imported only when chosen, so `rtk-policy hook` never pays for the others.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence

from rtk_policy import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn

AGENTS = ("claude", "copilot", "gemini", "cursor", "codex")


def _add_policy_options(
    parser: argparse.ArgumentParser,
    policies_help: str = "policy file or folder to use instead of the search path (repeatable)",
) -> None:
    parser.add_argument("--policies", action="append", metavar="PATH", help=policies_help)
    parser.add_argument("--backend", choices=("cel-expr", "cel-python"), help="CEL backend")
    parser.add_argument(
        "--config", metavar="FILE", help="config.toml to use instead of the layered ones"
    )


#: the commands that report take `--quiet` (`--json` too: `add_report_options`)
QUIET_HELP = "print nothing on stdout (the exit code tells; errors and warnings still go to stderr)"


def _add_report_options(parser: argparse.ArgumentParser, json_help: str | None = None) -> None:
    """`--quiet`/`-q` and, when `json_help` is given, `--json` (issue 20.4: every command that
    reports takes both)."""
    parser.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    if json_help is not None:
        parser.add_argument("--json", dest="as_json", action="store_true", help=json_help)


def _add_system_options(parser: argparse.ArgumentParser, what: str) -> None:
    import argparse

    parser.add_argument("--system", action="store_true", help=what)
    # tests only: where / is taken to be for the machine-wide paths
    parser.add_argument("--root", default="/", help=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    """Build the argparse parser for every subcommand."""
    import argparse

    from rtk_policy.commands import EX_USAGE

    class Parser(argparse.ArgumentParser):
        """argparse with usage errors on their own exit code (64, EX_USAGE): 2 means "denied"."""

        def error(self, message: str) -> NoReturn:
            self.print_usage(sys.stderr)
            self.exit(EX_USAGE, f"{self.prog}: error: {message}\n")

    parser = Parser(
        prog="rtk-policy",
        description="Policy-as-code for the shell commands AI coding agents run.",
    )
    parser.add_argument("--version", action="version", version=f"rtk-policy {__version__}")
    sub = parser.add_subparsers(dest="subcommand", metavar="COMMAND")

    p = sub.add_parser("rewrite", help="decide and rewrite one command (exit 0/1/2/3)")
    p.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        help="the command: every word from the first one that is not an option of rewrite, options "
        "included (several words are joined with spaces, as `rtk rewrite` does)",
    )
    p.add_argument("--batch", metavar="FILE", help="JSON lines in, JSON lines out ('-' = stdin)")
    p.add_argument(
        "--json",
        dest="as_json",
        action="store_true",
        help="print the answer as JSON (exit, stdout, verdict, rewrite, rules), as --batch does",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="with --batch: processes deciding lines in parallel, answers kept in order "
        "(default 1; 0 = every core)",
    )
    p.add_argument("--agent", default="", help="agent name visible to policies as ctx.agent")
    _add_report_options(p)
    _add_policy_options(p)

    p = sub.add_parser(
        "explain", help="show the segments, the rules that matched, and the decision"
    )
    p.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        help="the command, its words taken as rewrite takes them (`explain git log --oneline`)",
    )
    _add_report_options(p, "machine-readable output")
    p.add_argument(
        "--all", dest="every", action="store_true", help="list every rule tried, not only matches"
    )
    p.add_argument(
        "--agent",
        default="",
        help="agent name visible to policies as ctx.agent; for claude, copilot, gemini, cursor or"
        " codex also that agent's hook answer and what its CLI does with it",
    )
    _add_policy_options(p)

    p = sub.add_parser("check", help="load, type-check and compile policies; run their examples")
    p.add_argument("paths", nargs="*", help="policy files or folders (default: the search path)")
    p.add_argument("--backend", choices=("cel-expr", "cel-python", "both"), help="CEL backend")
    p.add_argument("--config", metavar="FILE", help="config.toml to use")
    _add_report_options(p, "the result per backend as one JSON object (problems, examples)")

    p = sub.add_parser("hook", help="answer an agent's PreToolUse hook (JSON on stdin)")
    p.add_argument("agent", nargs="?", choices=AGENTS, help="agent protocol (default: detect)")
    _add_policy_options(p)
    p.add_argument(
        "--system",
        action="store_true",
        help="a machine-wide install's hook: the shipped packs and the managed folder's policies "
        "and config only, compiled through the root-owned system cache (what `init --system` "
        "installs)",
    )

    p = sub.add_parser(
        "init",
        help="install the hook into an agent's settings",
        description="Install the hook: by default the thin client `<python> -S -I <abs>/client.py "
        "AGENT`, which hands each call to the resident engine (started on demand) and decides "
        "in-process when none answers.",
    )
    p.add_argument("--global", dest="global_", action="store_true", help="user-wide settings")
    p.add_argument("--agent", choices=AGENTS, help="the agent (default: claude; all with --system)")
    _add_system_options(p, "write every agent's machine-wide settings (as root)")
    p.add_argument(
        "--no-audit-writer",
        dest="no_audit_writer",
        action="store_true",
        help="with --system: leave the audit writer service out (each hook writes its own log)",
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument(
        "--in-process",
        dest="in_process",
        action="store_true",
        help="install the in-process hook, `<python> -P <abs>/rtk_policy/__main__.py hook AGENT` "
        "(a new process per call), instead of the thin client",
    )
    form.add_argument(
        "--serve",
        action="store_true",
        help="the default, kept as an alias for older docs and scripts: install the thin client "
        "of the resident engine (never an http hook: Claude Code treats a down http server as "
        "no opinion)",
    )

    p.add_argument(
        "--fail",
        choices=("open", "closed", "deny"),
        help="what the hook answers when this install is broken (package or interpreter gone):"
        " open (no opinion), closed (ask; also the agent's own block-on-failure setting), deny;"
        " default $RTK_POLICY_FAIL, else the config's fail_mode, else open",
    )
    _add_report_options(p, "what was installed as one JSON object (files, changes, command)")

    p = sub.add_parser("uninstall", help="remove our hook entries from an agent's settings")
    p.add_argument("--global", dest="global_", action="store_true", help="user-wide settings")
    p.add_argument("--agent", choices=AGENTS, help="the agent (default: claude; all with --system)")
    _add_system_options(p, "remove our entries from every agent's machine-wide settings")
    _add_report_options(p, "what was removed as one JSON object")

    p = sub.add_parser(
        "doctor",
        help="check the installation and say what to fix (read-only; --fix repairs)",
        description="Check the installation without changing anything (its probes run in a"
        " private, temporary runtime and state folder); exit 1 on a problem.",
    )
    p.add_argument(
        "--fix",
        action="store_true",
        help="repair what can be repaired (a stale compiled cache, an entry whose interpreter or"
        " hook file is gone) and say what was repaired",
    )
    _add_report_options(p, "the findings as one JSON object (ok, findings: ok, text, fix)")

    p = sub.add_parser(
        "trust",
        help="let a project's .rtk-policy/ loosen (allow, rewrite, settings) while unchanged",
        description="A project's .rtk-policy/ only tightens (deny and ask rules) until you trust "
        "it: its files' digest is recorded, and any change to them makes it untrusted again.",
    )
    p.add_argument("dir", nargs="?", help="a folder of the project (default: the working folder)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--revoke", action="store_true", help="forget the trust in it")
    action.add_argument(
        "--list", dest="list_trusted", action="store_true", help="list the trusted projects"
    )
    _add_report_options(p, "the result (or the list) as one JSON object")

    p = sub.add_parser("audit", help="read the audit log")
    audit_sub = p.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    a = audit_sub.add_parser("tail", help="print the last records")
    a.add_argument("-f", "--follow", action="store_true")
    a.add_argument("-n", "--lines", type=int, default=10)
    a.add_argument("--file", help="audit log path")
    _add_report_options(a, "the records as they are stored, one JSON object a line")
    a = audit_sub.add_parser("stats", help="verdicts, top rules, latency")
    _add_report_options(a, "the stats as one JSON object")
    a.add_argument("--file", help="audit log path")
    a = audit_sub.add_parser("verify", help="check the hash chain against its anchor")
    a.add_argument("--file", help="audit log path")
    _add_report_options(a, "the result as one JSON object (ok, records, expired, problem)")
    a.add_argument("--key", help="HMAC key file of a keyed log (default: the configured key_file)")

    p = sub.add_parser("test", help="run policy tests and examples")
    p.add_argument("paths", nargs="*")
    p.add_argument("--format", choices=("text", "json", "junit"), default="text")
    _add_report_options(p, "the same as --format json")
    p.add_argument("--coverage", action="store_true")
    p.add_argument("--backend", choices=("cel-expr", "cel-python"))

    p = sub.add_parser("replay", help="evaluate past commands under candidate policies")
    p.add_argument(
        "inputs", nargs="*", help="transcripts or audit logs (default: ~/.claude/projects)"
    )
    _add_report_options(p, "the report as one JSON object")
    p.add_argument(
        "--jobs", type=int, default=0, help="processes (default: 1, all cores for large inputs)"
    )
    p.add_argument(
        "--baseline",
        action="append",
        metavar="PATH",
        help="policies that transcripts are compared with (default: the search path)",
    )
    p.add_argument(
        "--examples", type=int, default=3, metavar="N", help="examples per change (default 3)"
    )
    p.add_argument(
        "--no-claude-rules",
        action="store_true",
        help="do not read the Claude Code Bash(...) rules of each command's cwd",
    )
    p.add_argument(
        "--no-shipped",
        action="store_true",
        help="--policies and --baseline replace the shipped packs instead of adding to them",
    )
    _add_policy_options(
        p, "candidate policy file or folder, added to the shipped packs (repeatable)"
    )

    p = sub.add_parser("gain", help="tokens saved by rewrites, by day, tool and project")
    _add_report_options(p, "one JSON object: the totals and each grouping")
    p.add_argument("--log", help="the audit log to read (default: the configured one)")

    p = sub.add_parser("discover", help="commands that got no rewrite, ranked by tokens")
    p.add_argument(
        "inputs",
        nargs="*",
        help="transcripts or audit logs (default: ~/.claude/projects and the log)",
    )
    _add_report_options(p, "one JSON object: the ranked groups")
    p.add_argument("--limit", type=int, default=30, help="groups shown (default 30)")

    p = sub.add_parser("serve", help="run the resident engine")
    p.add_argument("--idle", type=float, default=900.0, help="exit after this many idle seconds")
    p.add_argument("--http", metavar="PORT", type=int, help="also answer http hooks on 127.0.0.1")

    p = sub.add_parser(
        "audit-writer",
        help="run the audit writer service (managed deployments; as its own system user)",
        description="Receive the hooks' audit records on a Unix socket, stamp each with its "
        "sender's uid and pid as the kernel reports them, chain them with the HMAC key and write "
        "the log; settings from the managed config's [audit] table.",
    )
    p.add_argument("--config", metavar="FILE", help="config.toml (default: the managed one)")
    p.add_argument("--socket", metavar="PATH", help="socket (default: the config's audit.writer)")
    p.add_argument("--user", metavar="NAME", help="started as root: become this user to serve")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    agent, system = words[1:2], words[2:] == ["--system"]
    if words[:1] == ["hook"] and all(w in AGENTS for w in agent) and (system or not words[2:]):
        # the hook's hot path: `hook [AGENT] [--system]` needs no argparse (nor its gettext and
        # locale imports)
        from rtk_policy.commands import hook
        from rtk_policy.hook.service import HookOptions

        hook_options = HookOptions(agent=agent[0] if agent else None, system=system)
        return hook.run(hook_options, sys.stdin, sys.stdout, sys.stderr)
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.subcommand in ("rewrite", "explain"):  # `rewrite --host x git status`
        args.cmd = unknown + args.cmd
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if not args.subcommand:
        from rtk_policy.commands import EX_USAGE

        parser.print_help(sys.stderr)
        return EX_USAGE
    if args.subcommand == "hook":
        from rtk_policy.commands import hook
        from rtk_policy.hook.service import HookOptions

        hook_options = HookOptions(
            args.agent, args.policies, args.backend, args.config, args.system
        )
        return hook.run(hook_options, sys.stdin, sys.stdout, sys.stderr)
    options = command_options(args)
    from rtk_policy.util.lazy_import import import_module

    module = import_module(f"rtk_policy.commands.{args.subcommand.replace('-', '_')}")
    if vars(args).get("quiet"):  # nothing on stdout; errors and warnings still on stderr
        with open(os.devnull, "w", encoding="utf-8") as nowhere:
            return int(module.run(stdin=sys.stdin, stdout=nowhere, stderr=sys.stderr, **options))
    return int(module.run(stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr, **options))


def command_options(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options of a subcommand as the keyword parameters of its `run` (each named by
    its argparse dest). `--quiet` is `main`'s to apply (stdout to nowhere), `test --json` is
    `--format json`."""
    options = {k: v for k, v in vars(args).items() if k not in ("subcommand", "quiet")}
    if args.subcommand == "test" and options.pop("as_json", False):
        options["format"] = "json"
    return options


def cli() -> None:
    """The `rtk-policy` console script and `python -m rtk_policy`: `main()`, then exit with its
    code.

    A `hook` call runs without the cyclic garbage collector (one short decision: its passes over the
    ~50,000 objects of the loaded policies cost ~4 ms) and exits without the interpreter's teardown
    (freeing every module and object: ~8 ms). Nothing is lost by that: the answer is flushed here,
    the audit record is on disk already (one `os.write`), and no atexit handler or non-daemon thread
    of ours is left.
    """
    hook = sys.argv[1:2] == ["hook"]
    if hook:
        gc.disable()
    try:
        code = main()
        if not hook:  # the hook flushes its own way below
            sys.stdout.flush()
    except BrokenPipeError:
        code = _reader_gone()
    if hook:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - e.g. a closed pipe: the normal exit reports it
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


#: the exit code of a command whose reader closed its output (the shell's 128 + SIGPIPE)
READER_GONE = 141


def _reader_gone() -> int:
    """`READER_GONE`, after stdout's reader closed the pipe (`rewrite --batch FILE | head`): what
    was decided is in the audit log already, nothing more can be said, and stdout now points at
    the null device so the interpreter's last flush prints no traceback."""
    try:
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, sys.stdout.fileno())
        os.close(nowhere)
    except (OSError, ValueError):  # stdout without a file descriptor: nothing to repoint
        pass
    return READER_GONE
