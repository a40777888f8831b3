"""Running real git in a scratch repository made by a test: no user or system configuration."""

from __future__ import annotations

import os
import subprocess


def git(repo, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """git ARGS in `repo` (never checked: the tests read what git did), `env` added."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=repo, env={**base, **(env or {})},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=20,
                          check=False)  # fmt: skip
