"""The policy stage: load YAML policy files → validate → compile CEL → evaluate against parsed
commands.

Light to import (the hook imports it): yaml, lark and the CEL libraries are imported only when
needed.
"""

from __future__ import annotations

from rtk_policy.policy.errors import PolicyLoadError, Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PolicyLoadError",
    "PolicySet",
    "Problem",
    "all_backends",
    "available_backends",
    "get_backend",
    "load_policy_set",
    "policy_search_path",
]

_LAZY = {
    "PolicySet": "rtk_policy.policy.policyset",
    "load_policy_set": "rtk_policy.policy.load",
    "policy_search_path": "rtk_policy.policy.load",
    "available_backends": "rtk_policy.policy.backends.select",
    "all_backends": "rtk_policy.policy.backends.select",
    "get_backend": "rtk_policy.policy.backends.select",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rtk_policy.policy' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
