"""The user's trust in project layers, by digest (as `direnv allow` records an `.envrc`).

`paths.trust_file()` holds, per project layer folder (its real path), the sha256 digest of every
file that layer loads (`config.toml` and each policy file: names and bytes) when the user ran
`rtk-policy trust`. A layer whose files digest the same is trusted; any edit, added, removed or
renamed file makes it CHANGED (untrusted again) until the user trusts it again. The file is written
atomically (temp file + rename), owner-only. A trust file that cannot be read or parsed trusts
nothing: it can only lose the projects' loosening, never add any.
"""

from __future__ import annotations

import json
import os

from rtk_policy.config import paths
from rtk_policy.config.layers import CHANGED, TRUSTED, UNTRUSTED, Layer
from rtk_policy.util.hashing import sha256

FORMAT = 1


def layer_digest(layer: Layer) -> str:
    """sha256 over the files the layer loads: each name (relative to the layer folder), its size and
    bytes, config first; files that could not be read count by their problem."""
    digest = sha256()
    for path, data in loaded_files(layer):
        name = os.path.relpath(path, layer.folder)
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0%d\0" % len(data) + data)
    for problem in layer.problems:
        digest.update(b"!" + problem.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def loaded_files(layer: Layer) -> list[tuple[str, bytes]]:
    """The (path, bytes) of every file the layer loads, config first."""
    config = layer.config
    found = [config] if config is not None and config[1] is not None else []
    return found + list(layer.policies)  # type: ignore[operator]


def read_records(path: str | None = None) -> dict[str, dict]:
    """The trust records: layer folder → {"digest", "trusted_at", "files"} ({} when unreadable)."""
    try:
        with open(path or paths.trust_file(), "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return {}
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, dict):
        return {}
    return {k: v for k, v in layers.items() if isinstance(v, dict) and isinstance(k, str)}


def status_of(layer: Layer, records: dict[str, dict]) -> str:
    """TRUSTED when `records` hold the layer's current digest, CHANGED when they hold another one,
    else UNTRUSTED."""
    found = records.get(layer.folder)
    if found is None:
        return UNTRUSTED
    return TRUSTED if found.get("digest") == layer_digest(layer) else CHANGED


def trust_layer(layer: Layer, path: str | None = None) -> dict:
    """Record the layer's current digest as trusted; returns the record written."""
    import time

    files = [path for path, _ in loaded_files(layer)]
    entry = {
        "digest": layer_digest(layer),
        "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": [os.path.relpath(p, layer.folder) for p in files],
    }
    records = read_records(path)
    records[layer.folder] = entry
    write_records(records, path)
    return entry


def revoke(folder: str, path: str | None = None) -> bool:
    """Forget the trust in the layer `folder`; False when it was not trusted."""
    records = read_records(path)
    if records.pop(folder, None) is None:
        return False
    write_records(records, path)
    return True


def write_records(records: dict[str, dict], path: str | None = None) -> None:
    """Write the trust file atomically (temp file in the same folder, then rename), mode 0600."""
    import tempfile

    target = path or paths.trust_file()
    folder = os.path.dirname(target)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    text = json.dumps({"version": FORMAT, "layers": records}, indent=2, sort_keys=True) + "\n"
    handle, temp = tempfile.mkstemp(prefix=".trust-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
