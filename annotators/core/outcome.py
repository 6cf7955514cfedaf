"""How a pure step says "drop this record": it returns a `Drop` instead of outputs.

The Beam wrapper (`pipelines.engine.Stage`) turns a Drop into a rejects row and a counter
`<stage>/rejected/<reason>`; tests assert on it directly.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Drop:
    """A record was not used. `reason` is a short snake_case code, `detail` free text."""

    reason: str
    detail: str = ""
