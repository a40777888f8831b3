"""The second CEL backend, cel-python (`celpy`, pure Python), found by its files.

Importing celpy (with lark and pendulum) costs a process ~50 ms, and a hook whose every rule the
guards decide (`guard.py`) never runs a CEL program. So `create()` gives a `Deferred` backend: its
`version` (part of the cache key) comes from celpy's files, and its first compile, restore or run
imports `cel_python_engine.py` (with `cel_python_runtime.py`, the backend's modules that import
celpy; the checker imports only celpy's parser, at load time).
"""

from __future__ import annotations

from rtk_policy.policy.backends.select import Deferred, file_version, module_file

#: format of `dump` (part of the backend version, hence of the cache key)
DUMP_FORMAT = "transpiled-5"
#: the library files whose size and mtime identify its build
_FILES = ("celpy", "celpy.evaluation")


def version() -> str:
    """The build identity of the installed celpy and of our program format; raise ImportError when
    celpy is not installed."""
    return "/".join([*(file_version(module_file(name)) for name in _FILES), DUMP_FORMAT])


def create() -> Deferred:
    """The backend instance, its library not imported yet."""
    return Deferred("cel-python", version(), "rtk_policy.policy.backends.cel_python_engine")
