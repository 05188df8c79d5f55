"""The grade of one submission: what the gradebook, the feedback and the terminal
show (:mod:`.gradebook`, :mod:`.feedback`, :mod:`.console`) and :mod:`.grade`
makes. It imports none of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Grade:
    """The grade of one file of the folder."""

    student: str
    status: str
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    library: dict[str, str] = field(default_factory=dict)
    file: str = ""
    seconds: float = 0.0
    digest: str = ""  # the file's sha256, as the gradebook finds its row again

    @property
    def total(self) -> float:
        return float(sum(self.scores.values()))
