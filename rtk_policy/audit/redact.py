"""Masking secrets in command text before it reaches the audit log (DESIGN §8).

`redact(text, extra)` replaces the secret part of every match with ``***`` and keeps the surrounding
words, so a record still shows *what* ran (`curl -H "Authorization: Bearer ***" …`) without the
value. Files named by ``-d @file`` are never opened: only the command text is ever seen here.
"""

from __future__ import annotations

from collections.abc import Iterable

from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MASK = "***"

#: Words that make a name secret: `GITHUB_TOKEN=`, `db_password=`, `--client-secret`, `"api_key":`.
_SECRET_WORD = (
    r"(?:token|passw(?:or)?d|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"
)
#: A shell value: single- or double-quoted, or a bare word up to a separator.
_VALUE = r"""(?:'[^']*'|"[^"]*"|[^\s&;|'"()<>]+)"""

#: An option through which a command reads a secret from stdin: --password-stdin, --token-stdin, …
_SECRET_STDIN = r"--[\w-]*(?:pass|token|secret|key)[\w-]*stdin\b"

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
    # Upper-case environment names of a password, an auth value or credentials: DB_PASS=, AUTH=,
    # MYSQL_PWD=, GIT_CREDENTIALS= (whole name parts, case-sensitive: `author=`, BYPASS= are none).
    (
        ("pass", "pwd", "auth", "cred"),
        r"((?<![\w])(?:[A-Z0-9]+_)*(?:PASS(?:WORD|WD|PHRASE)?|PWD|AUTH|CREDS?|CREDENTIALS)(?:_[A-Z0-9]+)*=)"
        + _VALUE,
        r"\1" + MASK,
    ),
    # Options named by a whole word pass / passphrase / auth / bearer: --pass V, --passphrase V,
    # --auth user:pw, --oauth2-bearer V (not --passes, --author, --auth-mode, --password-stdin).
    (
        ("pass", "auth", "bearer"),
        r"(?i)((?<![\w-])--?(?:[\w]+-)*(?:passphrase|pass|auth|bearer)(?:=|\s+))(?!-)"
        + _VALUE,
        r"\1" + MASK,
    ),
    # registry logins' -p VALUE (docker, podman, nerdctl, buildah, skopeo, helm registry).
    (
        ("login",),
        r"((?<![\w-])(?:docker|podman|nerdctl|buildah|skopeo|helm)\b[^|;&\n]*?\blogin\b[^|;&\n]*?"
        r"\s-p\s*)(?!-)" + _VALUE,
        r"\1" + MASK,
    ),
    # Archive passwords: zip/unzip -P VALUE, 7z -pVALUE.
    (("zip",), r"((?<![\w-])(?:zip|unzip|zipcloak)\b[^|;&\n]*?\s-P\s*)" + _VALUE, r"\1" + MASK),
    (("7z",), r"((?<![\w-])7z[a-z]?\b[^|;&\n]*?\s-p)(?=\S)" + _VALUE, r"\1" + MASK),
    # `vault login TOKEN` (its options before the token kept).
    (
        ("vault",),
        r"((?<![\w-])vault\s+login\s+(?:-[\w-]+(?:=\S+)?\s+)*)(?!-)" + _VALUE,
        r"\1" + MASK,
    ),
    # kubectl create secret … --from-literal=KEY=VALUE.
    (("from-literal",), r"((?<![\w-])--from-literal[=\s]+['\"]?[\w.-]+=)" + _VALUE, r"\1" + MASK),
    # An http(s)/ftp URL's user part alone: https://TOKEN@host.
    (("://",), r"(?i)\b((?:https?|ftps?)://)[^\s/:@'\"]+(?=@)", r"\1" + MASK),
    # What a --password-stdin (--token-stdin, …) reads: a here-string, or what echo/printf pipes in.
    (
        ("stdin",),
        r"(?i)(" + _SECRET_STDIN + r"[^|;&\n]*?<<<\s*)" + _VALUE,
        r"\1" + MASK,
    ),
    (
        ("stdin",),
        r"(?i)(<<<\s*)" + _VALUE + r"(?=[^|;&\n]*" + _SECRET_STDIN + ")",
        r"\1" + MASK,
    ),
    (
        ("stdin",),
        r"(?i)((?<![\w-])(?:echo|printf)\s+(?:-\w+\s+)*)" + _VALUE
        + r"(?=\s*\|[^|;&\n]*" + _SECRET_STDIN + ")",
        r"\1" + MASK,
    ),
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
        import re  # on first use: a cold hook may need no `re` at all

        pattern = _compiled[source] = re.compile(source)
    return pattern


def compile_extra(patterns: Iterable[str]) -> tuple[tuple[re.Pattern[str], ...], tuple[str, ...]]:
    """Compile the config's `audit.redact` regexes; returns (compiled, errors for bad ones)."""
    compiled: list[re.Pattern[str]] = []
    errors: list[str] = []
    for pattern in patterns:
        import re  # only for a config that has some

        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            errors.append(f"audit.redact: bad regex {pattern!r}: {error}")
    return tuple(compiled), tuple(errors)


#: A word that may be a token: 20 or more token characters standing alone or as a value (`X=…`,
#: `--opt=…`, quoted); no `/` or `.`, so paths, file and host names are never one.
_TOKEN_WORD = lazy(
    globals(), "_TOKEN_WORD", r"""(?:(?<=[\s'"=:])|^)([A-Za-z0-9_+-]{20,}={0,2})(?=$|[\s'";|&)])"""
)


#: every ASCII character that cannot be part of a `_TOKEN_WORD` run, as a blank
_NOT_TOKEN = str.maketrans(
    {chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) in "_+-")}
)


def _may_hold_token(text: str) -> bool:
    """False when `text` has no run of 20 characters `_TOKEN_WORD` could match (the regex is then
    not compiled: most commands hold none). A run of such characters survives the blanking of the
    other ASCII characters whole, so it lies within one word of 20 or more characters."""
    return any(len(word) >= 20 for word in text.translate(_NOT_TOKEN).split())


def _entropy(word: str) -> float:
    """Shannon entropy of `word`'s characters, in bits per character."""
    import math  # only for a word that may be a token

    counts = [word.count(c) for c in set(word)]
    return -sum(n / len(word) * math.log2(n / len(word)) for n in counts)


def looks_like_token(word: str) -> bool:
    """Whether `word` looks like a generated secret: letters and digits mixed at high entropy —
    upper case, lower case and digits in 20+ characters, or 32+ characters that are not hex (a
    git object name stays readable) — never a word of letters and `_`/`-` alone."""
    if not any(c.isdigit() for c in word) or not any(c.isalpha() for c in word):
        return False
    mixed_case = any(c.isupper() for c in word) and any(c.islower() for c in word)
    if mixed_case:
        return _entropy(word) >= 3.5
    hex_only = all(c in "0123456789abcdefABCDEF" for c in word)
    return len(word) >= 32 and not hex_only and _entropy(word) >= 4.0


def _mask_token(match: re.Match[str]) -> str:
    return MASK if looks_like_token(match.group(1)) else match.group(1)


def redact(text: str, extra: Iterable[re.Pattern[str]] = ()) -> str:
    """`text` with every secret masked: built-in kinds first, then words that look like generated
    tokens, then each `extra` regex's match."""
    if not text:
        return text
    lowered = text.lower()
    present = {trigger for trigger in _TRIGGERS if trigger in lowered}
    if present:
        for triggers, source, replacement in _RULES:
            if not triggers.isdisjoint(present):
                text = _pattern(source).sub(replacement, text)
    if len(text) >= 20 and _may_hold_token(text):
        text = _TOKEN_WORD.sub(_mask_token, text)
    for pattern in extra:
        text = pattern.sub(MASK, text)
    return text
