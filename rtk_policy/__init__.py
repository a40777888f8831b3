"""rtk-policy: a policy-as-code engine for the shell commands AI coding agents run."""

__version__ = "0.1.0"
