"""What the compiler (`compiler.py`) makes of a policy set and the cache keeps: per file its
metadata and file-level expressions, per rule its expressions as indexes into the list of compiled
CEL programs, with their guard forms (`guards/ir.py`)."""

from __future__ import annotations

from rtk_policy.policy.model import Rule
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NO_PROGRAM = -1
#: version of the compiled payload (CompiledRule fields, load-time source rewrites): part of the
#: cache key
#: 11: an alternative's pre-test literals may be those of its mandatory groups; literals holding
#: another are left out
#: 10: pre-test literals also read a pattern's mandatory groups (`regex_literal._group_literals`)
#: 9: rules carry `locked`, the payload the problems of a partial load
#: 8: rules carry their `tools:` selector
#: 7: the payload's valid literal `matches` patterns carry their pre-test literals
COMPILED_FORMAT = "11"


@record.frozen
class CompiledFile:
    """A policy file's metadata and the program indexes of its file-level expressions."""

    path: str
    name: str
    kind: str
    when: int = NO_PROGRAM
    pipeline_consumer: int = NO_PROGRAM
    #: guard forms (`guard.py`) of `when` and `pipeline_consumer`; () when none
    when_guard: tuple[Any, ...] = ()
    consumer_guard: tuple[Any, ...] = ()


@record.frozen
class CompiledRule:
    """A rule and the program indexes of its expressions."""

    rule: Rule
    file_index: int
    match: int
    message: int = NO_PROGRAM
    rewrite: int = NO_PROGRAM
    #: programs derived from the match (`program_index.py`) when the rule has no `programs:` list
    derived: tuple[str, ...] = ()
    #: guard form of the match (`guard.py`): a Python pre-check that can prove the rule does not
    #: match
    guard: tuple[Any, ...] = ()
    #: guard form of the rewrite (rewrite rules) or message (permission rules): when it gives a
    #: plain string, that string is CEL's answer too and the backend is not called
    output: tuple[Any, ...] = ()

    @property
    def index(self) -> tuple[str, ...]:
        """The programs this rule is tried on (empty: every segment)."""
        return self.rule.programs or self.derived


def rules_facts(
    compiled: Any,
) -> tuple[tuple[Rule, ...], tuple[int, ...], tuple[tuple[str, ...], ...]]:
    """(the rules, their files' indexes, their `index`es) of a sequence of compiled rules: what a
    policy set indexes its rules by. A set read from the compiled cache (`stored.StoredRules`)
    has them as `facts`, without reading a guard form."""
    facts = getattr(compiled, "facts", None)
    if facts is not None:
        return facts
    return (
        tuple([c.rule for c in compiled]),
        tuple([c.file_index for c in compiled]),
        tuple([c.index for c in compiled]),
    )
