"""Reading a peeled command's arguments: its subcommand, the operands after it, and its flags."""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.paths import landed, operand_paths

_KUBE = frozenset(
    {"-n", "--namespace", "--context", "--cluster", "--user", "--kubeconfig", "-s", "--server",
     "--token", "--as", "--as-group", "--as-uid", "--certificate-authority", "--client-certificate",
     "--client-key", "--cache-dir", "--request-timeout", "-v", "--v", "--vmodule", "--log-file",
     "--profile", "--tls-server-name", "--username", "--password"}
)  # fmt: skip
_DOCKER = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level",
                     "--tlscacert", "--tlscert", "--tlskey"})  # fmt: skip
#: Per program, the global options before the subcommand that take a separate value: the
#: subcommand is the first argument that is neither an option nor such a value.
GLOBAL_OPTIONS: dict[str, frozenset[str]] = {
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                      "--super-prefix"}),
    "kubectl": _KUBE,
    "oc": _KUBE,
    "helm": frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver",
                       "--kube-as-user", "--kube-as-group", "--kube-token", "--kube-ca-file",
                       "--kube-tls-server-name", "--registry-config", "--repository-cache",
                       "--repository-config", "--burst-limit", "--qps"}),
    "az": frozenset({"--subscription", "--query", "-o", "--output"}),
    "gcloud": frozenset({"--project", "--format", "--account", "--configuration",
                         "--billing-project", "--impersonate-service-account", "--verbosity",
                         "--flags-file", "--trace-token", "--access-token-file"}),
    "aws": frozenset({"--profile", "--region", "--output", "--endpoint-url", "--query",
                      "--cli-read-timeout", "--cli-connect-timeout", "--color", "--ca-bundle",
                      "--cli-binary-format"}),
    "docker": _DOCKER,
    "podman": _DOCKER,
    "nerdctl": _DOCKER,
    "gh": frozenset({"-R", "--repo"}),
    "systemctl": frozenset({"-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property",
                            "--state", "-o", "--output", "-n", "--lines", "--root"}),
    "terraform": frozenset(),
    "npm": frozenset({"--prefix", "-w", "--workspace"}),
    "pnpm": frozenset({"-C", "--dir", "--filter", "-F"}),
    "yarn": frozenset({"--cwd"}),
    "cargo": frozenset({"--config", "-Z", "--color"}),
}  # fmt: skip


def subcommand_index(program: str, args: Sequence[str]) -> int:
    """The index in `args` of the subcommand: the first argument that is not an option nor the
    value of one of the program's global options (`GLOBAL_OPTIONS`); -1 when there is none."""
    with_value = GLOBAL_OPTIONS.get(program, frozenset())
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a in with_value:
            i += 2
            continue
        if a.startswith("-") and a != "-":
            if a == "--":
                return i + 1 if i + 1 < n else -1
            i += 1
            continue
        return i
    return -1


def subcommand(program: str, args: Sequence[str]) -> str:
    """Return the subcommand (`subcommand_index`), "" when there is none."""
    i = subcommand_index(program, args)
    return args[i] if i >= 0 else ""


def operands(program: str, args: Sequence[str]) -> tuple[str, ...]:
    """The arguments after the subcommand that are not options (every one after a `--`)."""
    i = subcommand_index(program, args)
    if i < 0:
        return ()
    out: list[str] = []
    options = True
    for a in args[i + 1 :]:
        if options and a == "--":
            options = False
        elif not options or not a.startswith("-") or a == "-":
            out.append(a)
    return tuple(out)


def flags(args: Sequence[str]) -> tuple[str, ...]:
    """Return the arguments that start with "-" (not "-" itself), up to a "--"."""
    if "--" in args:
        args = args[: args.index("--")]
    out: list[str] = []
    for a in args:
        if a[:1] == "-" and a != "-":
            out.append(a)
    return tuple(out)


def argument_facts(
    program: str, args: Sequence[str], cwd: str
) -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """`(subcommand, flags, operands, operand_paths)` of a command's arguments, in one pass over
    them when none is `--` (the common case; with one, each function reads them on its own)."""
    if "--" in args:
        return (
            subcommand(program, args),
            flags(args),
            operands(program, args),
            operand_paths(args, cwd),
        )
    with_value = GLOBAL_OPTIONS.get(program, _NO_OPTIONS)
    found: list[str] = []  # the options
    after: list[str] = []  # the operands after the subcommand
    paths: list[str] = []
    sub, seen, value_next = "", False, False  # seen: the subcommand is found
    for a in args:
        if a[:1] == "-" and a != "-":
            found.append(a)
            if not seen:  # (a global option's value, a global option taking one, or neither)
                value_next = not value_next and a in with_value
            continue
        if a:
            paths.append(a)
        if seen:
            after.append(a)
        elif value_next:
            value_next = False
        else:
            sub, seen = a, True
    return sub, tuple(found), tuple(after), landed(paths, cwd)


_NO_OPTIONS: frozenset[str] = frozenset()
