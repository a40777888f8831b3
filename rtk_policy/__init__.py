"""rtk-policy: a policy-as-code engine for the shell commands AI coding agents run."""

__version__ = "0.2.0"
