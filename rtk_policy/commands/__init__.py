"""The subcommands: one module each, with `run(args, stdin, stdout, stderr) -> int`."""
