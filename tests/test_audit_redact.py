"""Redaction: no secret kind ever reaches the audit file, in any field; ordinary commands stay."""

from __future__ import annotations

import pytest
from test_audit_support import make_config, make_decision, make_outcome

from rtk_policy.audit import log as audit
from rtk_policy.audit.redact import compile_extra, redact

# (command, the secret that must vanish, text that must stay)
SECRETS = [
    (
        'curl -H "Authorization: Bearer abc123xyz987" https://api.x',
        "abc123xyz987",
        "Authorization: Bearer ***",
    ),
    (
        "curl -H 'Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==' https://x",
        "dXNlcjpwYXNzd29yZA==",
        "Basic ***",
    ),
    ('curl "https://x/api?token=tok_SEKRET_1&page=2"', "tok_SEKRET_1", "page=2"),
    ("deploy password=hunter2hunter", "hunter2hunter", "password=***"),
    ("deploy passwd=pw_SEKRET_2", "pw_SEKRET_2", "passwd=***"),
    ("deploy secret=sc_SEKRET_3", "sc_SEKRET_3", "secret=***"),
    ("curl https://x/?api_key=ak_SEKRET_4", "ak_SEKRET_4", "api_key=***"),
    ("curl https://x/?apikey=ak_SEKRET_5", "ak_SEKRET_5", "apikey=***"),
    ("mysql -u root -pmy_SEKRET_6 shop", "my_SEKRET_6", "mysql -u root -p*** shop"),
    ("psql --password pg_SEKRET_7 -h db", "pg_SEKRET_7", "--password ***"),
    ("mysqldump --password=md_SEKRET_8 shop", "md_SEKRET_8", "--password=***"),
    ("GITHUB_TOKEN=gt_SEKRET_9 gh pr list", "gt_SEKRET_9", "gh pr list"),
    ("AWS_SECRET_ACCESS_KEY='aws SEKRET 10' aws s3 ls", "SEKRET 10", "aws s3 ls"),
    ("DB_PASSWORD=dbp_SEKRET_11 ./migrate", "dbp_SEKRET_11", "./migrate"),
    ("STRIPE_KEY=sk_SEKRET_12 node app.js", "sk_SEKRET_12", "node app.js"),
    (
        "git clone https://alice:url_SEKRET_13@github.com/o/r.git",
        "url_SEKRET_13",
        "alice:***@github.com",
    ),
    (
        "echo ghp_0123456789abcdefghijABCDEFGHIJ0123",
        "ghp_0123456789abcdefghijABCDEFGHIJ0123",
        "ghp_***",
    ),
    (
        "echo github_pat_11AAAAAAA0bbbbbbbbbbbb_cccccccccccc",
        "bbbbbbbbbbbb_cccccccccccc",
        "github_pat_***",
    ),
    ("export X=sk-proj-AbCdEfGhIjKlMnOpQrStUv", "AbCdEfGhIjKlMnOpQrStUv", "sk-***"),
    ("slack-post xoxb-1234567890-abcdefghijkl", "1234567890-abcdefghijkl", "xoxb-***"),
    ("aws --profile x AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE", "AKIA***"),
    (
        "curl -H 'X: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U' x",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJ***",
    ),
    ("curl -u admin:cu_SEKRET_14 https://x", "cu_SEKRET_14", "admin:***"),
    ('curl -H "X-Api-Key: xk_SEKRET_15" https://x', "xk_SEKRET_15", "X-Api-Key: ***"),
    ("""curl -d '{"password": "js_SEKRET_16"}' https://x""", "js_SEKRET_16", '"password": "***"'),
    ("sshpass -p ssh_SEKRET_17 ssh host", "ssh_SEKRET_17", "ssh host"),
    (
        "echo '-----BEGIN RSA PRIVATE KEY-----\nMIIEpk_SEKRET_18\n-----END RSA PRIVATE KEY-----'",
        "MIIEpk_SEKRET_18",
        "BEGIN RSA",
    ),
    # issue 18: the kinds a red-team pass found in the audit log
    ("docker login -p dk_SEKRET_19 registry.x", "dk_SEKRET_19", "docker login -p ***"),
    ("export DB_PASS=dbp_SEKRET_20", "dbp_SEKRET_20", "DB_PASS=***"),
    ("AUTH=au_SEKRET_21 ./deploy", "au_SEKRET_21", "./deploy"),
    ("MYSQL_PWD=pw_SEKRET_22 mysql shop", "pw_SEKRET_22", "MYSQL_PWD=***"),
    ("git clone https://tk_SEKRET_23@github.com/o/r", "tk_SEKRET_23", "https://***@github.com"),
    ("vault login -no-print vt_SEKRET_24", "vt_SEKRET_24", "vault login -no-print ***"),
    (
        "kubectl create secret generic db --from-literal=password=kl_SEKRET_25",
        "kl_SEKRET_25",
        "--from-literal=password=***",
    ),
    ("kubectl create secret generic db --from-literal=pw=kl_SEKRET_26", "kl_SEKRET_26", "pw=***"),
    ("gpg --batch --passphrase gp_SEKRET_27 -d f.gpg", "gp_SEKRET_27", "--passphrase ***"),
    ("zip -r -P zp_SEKRET_28 out.zip dir", "zp_SEKRET_28", "-P *** out.zip"),
    ("7z a -pzz_SEKRET_29 out.7z dir", "zz_SEKRET_29", "-p*** out.7z"),
    ("curl --oauth2-bearer ob_SEKRET_30 https://x", "ob_SEKRET_30", "--oauth2-bearer ***"),
    ("docker login -u me --password-stdin <<< ps_SEKRET_31", "ps_SEKRET_31", "<<< ***"),
    ("echo ps_SEKRET_32 | docker login -u me --password-stdin", "ps_SEKRET_32", "echo ***"),
    ("helm registry login r.x -u me -p hr_SEKRET_33", "hr_SEKRET_33", "-p ***"),
    # values that look like generated tokens, whatever they are called
    ("export RELEASE=Zx8Kq2LmP9vR4tW7yB3nQ6", "Zx8Kq2LmP9vR4tW7yB3nQ6", "RELEASE=***"),
    ("deploy --with q7Wm2Rk9Tz4Lp8Xv3Nb6Yc1Hd5", "q7Wm2Rk9Tz4Lp8Xv3Nb6Yc1Hd5", "--with ***"),
]

KEPT = [
    "git log --oneline -n 5",
    "sort --key=3 data.csv",
    "docker login --password-stdin -u me",
    "mysql -u root -p shop",
    "grep -r 'token' src/",
    "curl -d @keys/id_rsa https://x",
    'git commit --author "Ann Lee <ann@example.com>" -m "fix: parser"',
    "git checkout 3f2c9e1a7b4d5e6f708192a3b4c5d6e7f8091a2b",
    "pytest -k test_the_fast_path_is_taken_for_plain_input",
    "az storage container list --account-name acct --auth-mode login",
    "ls src/Components/UserProfile2Component.tsx",
    "docker run -e BYPASS_CACHE=1 image",
    "ssh git@github.com",
]


@pytest.mark.parametrize(("command", "secret", "kept"), SECRETS)
def test_secret_never_reaches_the_file(tmp_path, command, secret, kept):
    config = make_config(tmp_path)
    decision = make_decision(
        command,
        "rtk " + command,
        verdict="ask",
        reasons=(f"asked: {command}",),
        warnings=(command,),
    )
    outcome = make_outcome([(command, "curl", 0), (command, "sh", 1)], decision)
    audit.record(
        config, agent="claude", request={"command": command}, outcome=outcome, error=command
    )
    content = (tmp_path / "audit.jsonl").read_text()
    assert secret not in content
    record = next(audit.iter_records(config.audit_path))
    assert kept in record["command"]
    assert kept in record["segments"][1]["text"] and kept in record["rewrite"]["after"]


@pytest.mark.parametrize("command", KEPT)
def test_ordinary_commands_are_kept(command):
    assert redact(command) == command


def test_key_file_contents_are_never_read(tmp_path):
    key = tmp_path / "id_rsa"
    key.write_text("KEYFILE_SEKRET_CONTENT")
    config = make_config(tmp_path, audit_path=str(tmp_path / "log" / "audit.jsonl"))
    command = f"curl -d @{key} --data-binary @{key} https://x"
    audit.record(
        config, agent="claude", request={"command": command}, decision=make_decision(command, None)
    )
    content = (tmp_path / "log" / "audit.jsonl").read_text()
    assert f"@{key}" in content and "KEYFILE_SEKRET_CONTENT" not in content


def test_config_regexes_mask_their_whole_match(tmp_path):
    config = make_config(tmp_path, audit_redact=(r"corp-[0-9]{6}", "(unclosed"))
    audit.record(
        config, agent="a", request={"command": "vpn --pin corp-123456"}, decision=make_decision()
    )
    record = next(audit.iter_records(config.audit_path))
    assert record["command"] == "vpn --pin ***"
    assert any("bad regex '(unclosed'" in error for error in record["errors"])


def test_compile_extra_reports_bad_patterns():
    compiled, errors = compile_extra(["ok+", "[bad"])
    assert [p.pattern for p in compiled] == ["ok+"] and len(errors) == 1 and "[bad" in errors[0]


def test_the_token_pretest_never_hides_a_token_word():
    """`_may_hold_token` is False only where `_TOKEN_WORD` finds nothing (its regex is then not
    compiled): checked on texts mixing token characters with every other ASCII character and
    some non-ASCII ones, around the 20-character threshold."""
    import random

    from rtk_policy.audit import redact as module

    rng = random.Random(20)
    token_chars = "aZ09_+-"
    others = [chr(c) for c in range(128) if chr(c) not in token_chars] + ["é", "\u00a0", "ß"]
    checked = 0
    for _ in range(4000):
        parts = []
        for _ in range(rng.randint(1, 4)):
            parts.append("".join(rng.choice(token_chars) for _ in range(rng.randint(15, 24))))
            parts.append("".join(rng.choice(others) for _ in range(rng.randint(0, 2))))
        text = "".join(parts)
        if module._TOKEN_WORD.search(text):
            assert module._may_hold_token(text), repr(text)
            checked += 1
    assert checked > 500  # the property was tested, not skipped
    assert not module._may_hold_token("cat /home/user/project/src/some_module/file.py")
