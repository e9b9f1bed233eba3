"""A scenario's problems as one message: `ScenarioError`, one `FILE: KEY.PATH: expected WHAT,
found WHAT` line per problem (satcc-core words them: `scenario::file`)."""

from __future__ import annotations

from satcc.errors import UserError


class ScenarioError(UserError):
    """A scenario file that cannot be used; `issues` holds one (path, message) per problem."""

    def __init__(self, source: str, issues: list[tuple[str, str]]):
        self.source = source
        self.issues = issues
        lines = [f"{source}: {path}: {msg}" if path else f"{source}: {msg}" for path, msg in issues]
        super().__init__("\n".join(lines))
