"""`python -m rtk_policy`, and the script of the in-process hook `init --in-process` writes:
`<python> -P <this file> hook AGENT` (`settings.targets.hook_command`)."""

from rtk_policy.main import cli

cli()
