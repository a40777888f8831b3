"""rtk_policy.agents.hook_input: stdin read with a size and a time limit, without a thread."""

from __future__ import annotations

import os
import sys
import time

from rtk_policy.agents import hook_input
from rtk_policy.agents.hook_input import read_stdin


class _Stream:
    """A stream around a descriptor, as sys.stdin is."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd


def _pipe_with(data: bytes, close: bool = True) -> tuple[int, int]:
    read, write = os.pipe()
    os.write(write, data)
    if close:
        os.close(write)
    return read, write


def test_a_closed_pipe_is_read_whole() -> None:
    read, _ = _pipe_with(b'{"a": 1}')
    assert read_stdin(_Stream(read), timeout=2) == (b'{"a": 1}', "")
    os.close(read)


def test_an_open_pipe_times_out_with_what_came() -> None:
    read, write = _pipe_with(b"partial", close=False)
    started = time.monotonic()
    data, problem = read_stdin(_Stream(read), timeout=0.3)
    assert (data, problem) == (b"partial", "stdin was not closed within 0.3 s")
    assert time.monotonic() - started < 3
    assert "rtk-policy-stdin" not in {t.name for t in __import__("threading").enumerate()}
    os.close(read)
    os.close(write)


def test_more_than_the_limit_is_refused() -> None:
    read, write = os.pipe()
    payload = b"x" * 5000

    if os.fork() == 0:  # a writer that outlasts the pipe buffer
        os.close(read)
        os.write(write, payload)
        os._exit(0)
    os.close(write)
    data, problem = read_stdin(_Stream(read), limit=4096, timeout=5)
    os.wait()
    os.close(read)
    assert data == b"" and "exceeds the 4096-byte limit" in problem


def test_a_descriptor_select_refuses_is_read_by_a_thread(monkeypatch) -> None:
    def refuse(*args: object) -> None:
        raise ValueError("filedescriptor out of range in select()")

    monkeypatch.setattr(hook_input.select, "select", refuse)
    read, _ = _pipe_with(b"whole")
    assert read_stdin(_Stream(read), timeout=2) == (b"whole", "")
    os.close(read)
    read, write = _pipe_with(b"half", close=False)
    assert read_stdin(_Stream(read), timeout=0.2) == (b"half", "stdin was not closed within 0.2 s")
    os.close(read)
    os.close(write)


def test_the_cold_hook_reads_stdin_without_threading() -> None:
    import subprocess

    code = (
        "import sys\nfrom rtk_policy.agents.hook_input import read_stdin\n"
        "print(read_stdin(sys.stdin)[0], 'threading' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=b"abc", capture_output=True)
    assert done.stdout.decode().split() == ["b'abc'", "False"]
