"""Config files parsed once: the keys of a `config.toml`, kept as JSON in the cache folder by the
sha256 of its bytes, so a cold hook does not import `tomllib` for a file it has parsed before.

`tomllib` costs a cold hook ~7 ms (it imports `typing`, `datetime` and `string`, and compiles its
regular expressions), about a tenth of the whole call, for a file that rarely changes. An entry
holds what `load.parse_config` returned for those bytes; it is read as data only (JSON) and checked
as the file's own keys are (`load._to_config`), and an entry that is missing, damaged or does not
check is parsed again.

Trust: a process that can write the cache folder can make an entry say something else than its
file, as it can edit the user's config or policy folder itself; the compiled-policy cache takes the
same stance (`policy/cache.py`), and the baseline asks before writes to that folder (guard-self).
So only layers the user's own files make are read from here: the managed config, which the user
cannot write, is always parsed from its own bytes (`load.merge_layers`).
"""

from __future__ import annotations

import os

from rtk_policy.config.paths import cache_dir
from rtk_policy.util.hashing import sha256
from rtk_policy.util.json_file import read_json, write_json

#: the entry format; entries of another are parsed again
FORMAT = 1
_PREFIX = "config-"
#: entries kept: older ones are removed when a new one is written
KEEP = 16


def entry_path(data: bytes) -> str:
    """The cache entry of a config file's bytes."""
    return os.path.join(cache_dir(), f"{_PREFIX}{sha256(data).hexdigest()}.json")


def remembered(data: bytes) -> dict[str, object] | None:
    """The keys kept for these bytes, or None (not kept, damaged, another format)."""
    entry = read_json(entry_path(data))
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    keys = entry.get("keys")
    return keys if isinstance(keys, dict) else None


def remember(data: bytes, keys: dict[str, object]) -> None:
    """Keep `keys` for these bytes (skipped when they are not JSON, e.g. a TOML date, or the
    folder cannot be written), and remove the oldest entries beyond `KEEP`."""
    if write_json(entry_path(data), {"format": FORMAT, "keys": keys}):
        _prune(cache_dir())


def _prune(folder: str) -> None:
    try:
        names = [n for n in os.listdir(folder) if n.startswith(_PREFIX) and n.endswith(".json")]
        if len(names) <= KEEP:
            return
        paths = sorted((os.path.join(folder, n) for n in names), key=os.path.getmtime)
        for path in paths[: len(paths) - KEEP]:
            os.unlink(path)
    except OSError:
        pass
