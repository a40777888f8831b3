"""A minimal client of `codex app-server` (JSON-RPC, one JSON object per line on stdio).

`codex exec --json` does not report hook runs; the app server — the same core, as IDE clients
drive it — sends `hook/started` and `hook/completed` notifications whose `run` holds the hook's
`status` (`completed`, `failed`, `blocked`, …) and `entries` (e.g. `{"kind": "error", "text":
"PreToolUse hook returned unsupported permissionDecision:allow"}`). Tests use it to see how
Codex classified our answer, and to read `hooks/list` (each hook's key, hash and trust status).
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any


class AppServer:
    """`codex app-server` started in `cwd` with `env` (and `args`), initialised; a context
    manager that kills it on exit. Gives up after `timeout` seconds."""

    def __init__(
        self,
        codex: Path,
        env: dict[str, str],
        cwd: Path,
        args: tuple[str, ...] = (),
        timeout: float = 60,
    ) -> None:
        self.process = subprocess.Popen(
            [str(codex), "app-server", *args],
            cwd=cwd,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._timer = threading.Timer(timeout, self.process.kill)
        self._timer.start()
        self._next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.request("initialize", {"clientInfo": {"name": "rtk-policy-e2e", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "initialized"})

    def __enter__(self) -> AppServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        self.process.kill()
        self.process.wait()

    def send(self, message: dict[str, Any]) -> None:
        """Write one message."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def messages(self):
        """The messages the server sends, as they come (notifications are also kept)."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if "method" in message and "id" not in message:
                self.notifications.append(message)
            yield message
        raise AssertionError("codex app-server closed its output")

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and return its result (notifications meanwhile are kept)."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        for message in self.messages():
            if message.get("id") == self._next_id and "method" not in message:
                if "error" in message:
                    raise AssertionError(f"{method} failed: {message['error']}")
                return message["result"]

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next notification `method`."""
        for message in self.messages():
            if message.get("method") == method:
                return message
        raise AssertionError(f"no {method}")  # pragma: no cover - messages() raises first

    def hooks_list(self) -> list[dict[str, Any]]:
        """`hooks/list`: every hook with `key`, `command`, `currentHash`, `trustStatus`."""
        result = self.request("hooks/list", {})
        return [hook for entry in result["data"] for hook in entry["hooks"]]

    def turn(self, cwd: Path, prompt: str) -> list[dict[str, Any]]:
        """Run one turn in a new thread; the `run` of every `hook/completed` of it."""
        thread = self.request("thread/start", {"cwd": str(cwd)})["thread"]
        self.request(
            "turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": prompt}]}
        )
        self.wait_for("turn/completed")
        return [
            n["params"]["run"] for n in self.notifications if n.get("method") == "hook/completed"
        ]
