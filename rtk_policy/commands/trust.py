"""`rtk-policy trust [DIR]`, `trust --revoke [DIR]`, `trust --list`: trusting project layers.

A project layer (`.rtk-policy/`) only tightens until its user trusts it: then its allow rules,
rewrites and settings apply too, as long as its files stay as they were when trusted
(`config/trust.py`).
`DIR` (default: the working folder) names the nearest `.rtk-policy/` at or above it.
"""

from __future__ import annotations

import io
import json
import os
from typing import IO

from rtk_policy.config import paths, trust
from rtk_policy.config.layers import PROJECT, read_layer


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Entry point of `rtk-policy trust`; exit 1 when there is nothing to trust or revoke.
    `--json`: the result (or the list) as one JSON object instead of the sentences."""
    as_json = bool(getattr(args, "json", False))
    if getattr(args, "list", False):
        if as_json:
            stdout.write(json.dumps({"trusted": trusted_layers()}, indent=2) + "\n")
            return 0
        return list_trusted(stdout)
    folder = getattr(args, "dir", None) or os.getcwd()
    text = io.StringIO() if as_json else stdout
    if getattr(args, "revoke", False):
        code = revoke(folder, text, stderr)
        report = {"ok": code == 0, "action": "revoke", "folder": folder}
    else:
        code = trust_folder(folder, text, stderr)
        report = {"ok": code == 0, "action": "trust", "folder": folder}
    if as_json:
        report["layer"] = layer_folder(folder)
        report["message"] = text.getvalue().strip()
        stdout.write(json.dumps(report, indent=2) + "\n")
    return code


def layer_folder(folder: str) -> str | None:
    """The nearest `.rtk-policy/` at or above `folder`, or None."""
    found = paths.project_layer_dirs(folder)
    return found[-1] if found else None


def trust_folder(folder: str, stdout: IO[str], stderr: IO[str]) -> int:
    """Record the digest of the project layer of `folder` as trusted."""
    layer_dir = layer_folder(folder)
    if layer_dir is None:
        stderr.write(f"rtk-policy trust: no {paths.PROJECT_FOLDER}/ folder at or above {folder}\n")
        return 1
    layer = read_layer(PROJECT, layer_dir)
    try:
        entry = trust.trust_layer(layer)
    except OSError as error:
        stderr.write(f"rtk-policy trust: cannot write {paths.trust_file()}: {error.strerror}\n")
        return 1
    files = ", ".join(entry["files"]) or "no files yet"
    stdout.write(
        f"trusted {layer_dir} (sha256 {entry['digest'][:16]}…: {files}).\n"
        "Its allow rules, rewrites and settings now apply; any change to these files makes it "
        "untrusted again until you run `rtk-policy trust` again.\n"
    )
    for problem in layer.problems:
        stderr.write(f"rtk-policy trust: warning: {problem}\n")
    return 0


def revoke(folder: str, stdout: IO[str], stderr: IO[str]) -> int:
    """Forget the trust in the project layer of `folder` (also when that folder is gone)."""
    layer_dir = layer_folder(folder) or os.path.join(os.path.realpath(folder), paths.PROJECT_FOLDER)
    try:
        removed = trust.revoke(layer_dir)
    except OSError as error:
        stderr.write(f"rtk-policy trust: cannot write {paths.trust_file()}: {error.strerror}\n")
        return 1
    if not removed:
        stderr.write(f"rtk-policy trust: {layer_dir} was not trusted\n")
        return 1
    stdout.write(f"revoked: {layer_dir} only tightens again\n")
    return 0


def trusted_layers() -> list[dict[str, str]]:
    """Each trusted layer: its folder, state (`trusted`, `changed`: its files differ now, or
    `missing`) and when it was trusted."""
    records = trust.read_records()
    found = []
    for layer_dir, entry in sorted(records.items()):
        if not os.path.isdir(layer_dir):
            state = "missing"
        else:
            state = trust.status_of(read_layer(PROJECT, layer_dir), records)
        found.append({"layer": layer_dir, "state": state, "since": entry.get("trusted_at", "?")})
    return found


def list_trusted(stdout: IO[str]) -> int:
    """Print each trusted layer: `trusted`, `changed` (its files differ now) or `missing`."""
    layers = trusted_layers()
    for layer in layers:
        stdout.write(f"{layer['state']:<9} {layer['layer']}  (since {layer['since']})\n")
    if not layers:
        stdout.write("no trusted projects\n")
    return 0
