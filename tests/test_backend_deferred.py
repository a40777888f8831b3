"""Backends found by their files and imported on first use (`backend.module_file`, `Deferred`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rtk_policy.policy.backends import select as backend

from rtk_policy.policy.backends import cel_python


def test_module_file_finds_modules_without_importing_them() -> None:
    code = (
        "import sys\nfrom rtk_policy.policy.backends.select import module_file\n"
        "print(module_file('celpy.evaluation'))\nprint('celpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    path, imported = done.stdout.split()
    import celpy.evaluation

    assert (path, imported) == (celpy.evaluation.__file__, "False")
    assert backend.module_file("json") == __import__("json").__file__


@pytest.mark.parametrize("name", ["no_such_module_xyz", "json.no_such_part", "os.path.join"])
def test_module_file_refuses_what_is_not_installed(name: str) -> None:
    with pytest.raises(ImportError):
        backend.module_file(name)


def test_the_cel_python_backend_imports_celpy_on_first_use() -> None:
    code = (
        "import sys\nfrom rtk_policy.policy.backends.select import get_backend\n"
        "b = get_backend('cel-python')\nprint(b.name, 'celpy' in sys.modules)\n"
        "program, uses = b.compile('1 + 1 == 2', 'bool')\n"
        "print(b.run_bool(program, b.activation({})), 'celpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["cel-python False", "True True"]


def test_the_deferred_version_is_the_files_and_the_format() -> None:
    import celpy
    import celpy.evaluation

    parts = cel_python.version().split("/")
    assert parts[-1] == cel_python.DUMP_FORMAT
    files = (celpy.__file__, celpy.evaluation.__file__)
    assert parts[:2] == [backend.file_version(path) for path in files]
    deferred = cel_python.create()
    assert (deferred.name, deferred.version) == ("cel-python", cel_python.version())
    assert not hasattr(deferred, "__length_hint__")  # a dunder probe does not load the backend
    assert deferred._real is None
    assert deferred.dump(deferred.compile("true", "bool")[0])  # the first real use loads it
    assert deferred._real is not None and deferred._real.version == deferred.version
    assert {"compile", "dump"} <= set(vars(deferred))  # methods are found directly after first use
