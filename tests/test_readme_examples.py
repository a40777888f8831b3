"""The README's policy and policy-test examples work as printed: the `team-rules` pack of "Writing a
policy" and the test file of "Testing policies" pass `rtk-policy test`."""

from __future__ import annotations

import io
from pathlib import Path

from rtk_policy.main import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _yaml_block(section: str) -> str:
    return README.split(section, 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_readme_test_file_passes_against_the_readme_pack(tmp_path, capsys):
    (tmp_path / "team-rules.yaml").write_text(_yaml_block("## Writing a policy"), encoding="utf-8")
    (tmp_path / "team-rules_test.yaml").write_text(
        _yaml_block("## Testing policies"), encoding="utf-8"
    )
    code = main(["test", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "6 passed, 0 failed, 0 errors" in out and "(3 cases in 1 test file(s), 3 examples)" in out
