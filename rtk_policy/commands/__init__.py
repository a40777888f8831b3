"""The subcommands: one module each, with `run(args, stdin, stdout, stderr) -> int`."""

#: The exit code of a usage error (sysexits.h EX_USAGE), apart from `rewrite`'s 0-3 verdict codes.
EX_USAGE = 64
