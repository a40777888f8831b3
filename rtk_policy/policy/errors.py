"""Load-time problems of policy files: `Problem` (one positioned message) and `PolicyLoadError` (all
of them)."""

from __future__ import annotations

from rtk_policy.util import record


@record.frozen
class Problem:
    """One problem found while loading a policy file, with its 1-based position."""

    file: str
    line: int  #: 1-based line (0 when the problem concerns the whole file)
    col: int  #: 1-based column (0 when unknown)
    message: str
    source_line: str = ""  #: the text of `line` in `file`, "" when unknown

    def render(self) -> str:
        """`file:line:col: message`, then the source line and a caret under the column."""
        where = self.file if self.line <= 0 else f"{self.file}:{self.line}:{max(self.col, 1)}"
        text = f"{where}: {self.message}"
        if self.source_line and self.line > 0:
            caret = " " * (max(self.col, 1) - 1) + "^"
            text += f"\n    {self.source_line}\n    {caret}"
        return text


class PolicyLoadError(Exception):
    """Policy files that cannot be loaded; `problems` lists every problem of every file."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(self.render())

    def render(self) -> str:
        """Every problem rendered, separated by newlines."""
        return "\n".join(problem.render() for problem in self.problems)
