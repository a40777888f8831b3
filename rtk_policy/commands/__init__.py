"""The subcommands: one module each, with `run(*, <options>, stdin, stdout, stderr) -> int`.

A subcommand's options are `run`'s keyword parameters, named as `main.py`'s argparse dests and
typed; tests call `run` directly with them.
"""

#: The exit code of a usage error (sysexits.h EX_USAGE), apart from `rewrite`'s 0-3 verdict codes.
EX_USAGE = 64
