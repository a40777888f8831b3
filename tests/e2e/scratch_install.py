"""A throwaway rtk-policy install that a test can break the way a user does: `pip uninstall`.

The package is built once per session into a wheel from this checkout and installed with pip into
a fresh virtual environment (no pip of its own; the running pip drives it with `--python`). Its
dependencies are those of the environment running the tests, linked into a folder that a `.pth`
line adds to the path — every package there but rtk-policy itself, so that once it is removed
nothing can import it —, so nothing is downloaded but the build backend. `uninstall` is a real
`pip uninstall -y rtk-policy` with the venv kept: exactly the state issue 16 describes (the hook
command's interpreter is still there; the package, its thin client and its console script are
gone).
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def pip(*args: str) -> None:
    """Run the running environment's pip; raise with its output when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def build_wheel(dest: Path) -> Path:
    """The rtk-policy wheel of this checkout, built into `dest`."""
    pip("wheel", "--no-deps", "-w", str(dest), str(REPO_ROOT))
    return next(dest.glob("rtk_policy-*.whl"))


def link_dependencies(folder: Path) -> Path:
    """`folder` holding a symlink to every entry of this environment's site-packages except
    rtk-policy's own (its package, metadata and editable-install hooks) and `.pth` files."""
    folder.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if name.startswith(("rtk_policy", "rtk-policy", "__editable__")) or name.endswith(".pth"):
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


class ScratchInstall:
    """rtk-policy installed from `wheel` into the venv `root/venv`."""

    def __init__(self, root: Path, wheel: Path) -> None:
        self.venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True)
        self.python = self.venv / "bin" / "python"
        site = subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        (Path(site) / "e2e-deps.pth").write_text(f"{link_dependencies(root / 'deps')}\n")
        pip("--python", str(self.python), "install", "--no-deps", str(wheel))

    @property
    def script(self) -> Path:
        """Its `rtk-policy` console script."""
        return self.venv / "bin" / "rtk-policy"

    def uninstall(self) -> None:
        """`pip uninstall -y rtk-policy`, the venv kept."""
        pip("--python", str(self.python), "uninstall", "-y", "rtk-policy")
        assert not self.script.exists()
