"""`python -m rtk_policy`."""

from rtk_policy.main import cli

cli()
