"""Masking secrets in command text before it reaches the audit log (DESIGN §8).

`redact(text, extra)` replaces the secret part of every match with ``***`` and keeps the surrounding
words, so a record still shows *what* ran (`curl -H "Authorization: Bearer ***" …`) without the
value. Files named by ``-d @file`` are never opened: only the command text is ever seen here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

#: Words that make a name secret: `GITHUB_TOKEN=`, `db_password=`, `--client-secret`, `"api_key":`.
_SECRET_WORD = (
    r"(?:token|passw(?:or)?d|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"
)
#: A shell value: single- or double-quoted, or a bare word up to a separator.
_VALUE = r"""(?:'[^']*'|"[^"]*"|[^\s&;|'"()<>]+)"""

#: Lower-case words that must occur in a command before a rule is worth compiling and running.
_SECRET_TRIGGERS = ("token", "passw", "secret", "api", "key", "credential")
_TOKEN_TRIGGERS = ("gh", "github_pat_", "glpat-", "sk-", "xox", "akia", "asia", "aiza", "eyj")

#: (triggers, pattern, replacement): group 1 is kept, the rest of the match becomes the mask unless
#: the replacement says otherwise. A rule is compiled the first time one of its triggers occurs in a
#: command, so ordinary commands (`git status`) cost a few substring tests, not ~25 regex compiles.
_RULE_SOURCES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # Private key blocks pasted into a command (heredocs, echo).
    (
        ("private key",),
        r"(?s)-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        r"-----BEGIN \1PRIVATE KEY-----" + MASK,
    ),
    # Authorization and Proxy-Authorization header values, the scheme kept.
    (
        ("authorization",),
        r"(?i)\b((?:proxy-)?authorization\s*:\s*"
        r"(?:(?:bearer|basic|token|digest|negotiate|ntlm|aws4-hmac-sha256)\s+)?)[^\s'\"]+",
        r"\1" + MASK,
    ),
    # Cookies (to the closing quote: values hold spaces), then X-Api-Key, X-Auth-Token, …
    (("cookie",), r"(?i)\b((?:set-)?cookie\s*:\s*)[^'\"\n]+", r"\1" + MASK),
    (
        _SECRET_TRIGGERS,
        r"(?i)((?<![\w-])[\w-]*" + _SECRET_WORD + r"[\w-]*\s*:\s*)[^\s'\"]+",
        r"\1" + MASK,
    ),
    # JSON-ish "password": "value" inside -d '{...}' bodies.
    (
        _SECRET_TRIGGERS,
        r'(?i)("[\w.-]*' + _SECRET_WORD + r'[\w.-]*"\s*:\s*")[^"]*',
        r"\1" + MASK,
    ),
    # name=value: query strings, assignments, env prefixes, --password=value.
    (
        _SECRET_TRIGGERS,
        r"(?i)((?<![\w.-])[\w.-]*" + _SECRET_WORD + r"[\w.-]*=)" + _VALUE,
        r"\1" + MASK,
    ),
    # Upper-case environment names holding KEY (SSH_KEY=, MY_KEY=, KEY=).
    (("key",), r"((?<![\w])[A-Z0-9_]*KEY[A-Z0-9_]*=)" + _VALUE, r"\1" + MASK),
    # --password VALUE, --token VALUE, --client-secret VALUE (not --password-stdin's next flag).
    (
        _SECRET_TRIGGERS,
        r"(?i)((?<![\w-])--?[\w-]*" + _SECRET_WORD + r"[\w-]*\s+)(?!-)" + _VALUE,
        r"\1" + MASK,
    ),
    # mysql-family -pVALUE (attached form only: `-p db` means "prompt", then a database name).
    (
        ("mysql", "mariadb"),
        r"((?<![\w-])(?:mysql\w*|mariadb[\w-]*)\b[^|;&\n]*?\s-p)(?=\S)" + _VALUE,
        r"\1" + MASK,
    ),
    # sshpass -p VALUE, redis-cli -a VALUE.
    (("sshpass",), r"((?<![\w-])sshpass\s+-p\s*)" + _VALUE, r"\1" + MASK),
    (("redis-cli",), r"((?<![\w-])redis-cli\b[^|;&\n]*?\s-a\s+)" + _VALUE, r"\1" + MASK),
    # curl -u user:pass, --user user:pass.
    (
        ("-u",),
        r"""((?<![\w-])(?:-u|--user)[\s=]+['"]?[^\s:'"]*:)[^\s'"]+""",
        r"\1" + MASK,
    ),
    # URLs with user:password@host.
    (("://",), r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'\"]*:)[^\s/@'\"]+(?=@)", r"\1" + MASK),
    # Well-known token shapes, the recognisable prefix kept.
    (_TOKEN_TRIGGERS, r"\b(gh[pousr]_)[A-Za-z0-9]{16,}", r"\1" + MASK),
    (_TOKEN_TRIGGERS, r"\b(github_pat_)[A-Za-z0-9_]{16,}", r"\1" + MASK),
    (_TOKEN_TRIGGERS, r"\b(glpat-)[A-Za-z0-9_-]{16,}", r"\1" + MASK),
    (_TOKEN_TRIGGERS, r"(?<![\w-])(sk-)[A-Za-z0-9_-]{16,}", r"\1" + MASK),
    (_TOKEN_TRIGGERS, r"\b(xox[abposr]-)[A-Za-z0-9-]{8,}", r"\1" + MASK),
    (_TOKEN_TRIGGERS, r"\b((?:AKIA|ASIA))[0-9A-Z]{16}\b", r"\1" + MASK),
    (_TOKEN_TRIGGERS, r"\b(AIza)[0-9A-Za-z_-]{30,}", r"\1" + MASK),
    (
        _TOKEN_TRIGGERS,
        r"\b(eyJ)[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
        r"\1" + MASK,
    ),
)

_compiled: dict[str, re.Pattern[str]] = {}
#: every trigger of every rule, each tested once per text
_TRIGGERS = tuple(sorted({trigger for triggers, _, _ in _RULE_SOURCES for trigger in triggers}))
_RULES = tuple(
    (frozenset(triggers), source, replacement) for triggers, source, replacement in _RULE_SOURCES
)


def _pattern(source: str) -> re.Pattern[str]:
    """The compiled `source`, compiled once per process."""
    pattern = _compiled.get(source)
    if pattern is None:
        pattern = _compiled[source] = re.compile(source)
    return pattern


def compile_extra(patterns: Iterable[str]) -> tuple[tuple[re.Pattern[str], ...], tuple[str, ...]]:
    """Compile the config's `audit.redact` regexes; returns (compiled, errors for bad ones)."""
    compiled: list[re.Pattern[str]] = []
    errors: list[str] = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            errors.append(f"audit.redact: bad regex {pattern!r}: {error}")
    return tuple(compiled), tuple(errors)


def redact(text: str, extra: Iterable[re.Pattern[str]] = ()) -> str:
    """`text` with every secret masked: built-in kinds first, then each `extra` regex's match."""
    if not text:
        return text
    lowered = text.lower()
    present = {trigger for trigger in _TRIGGERS if trigger in lowered}
    if present:
        for triggers, source, replacement in _RULES:
            if not triggers.isdisjoint(present):
                text = _pattern(source).sub(replacement, text)
    for pattern in extra:
        text = pattern.sub(MASK, text)
    return text
