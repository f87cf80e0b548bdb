"""Lineage: where a record, graph, object or dataset came from, in one shape for every capability.

A :class:`Lineage` is its subject and a list of :class:`Step` s, newest first: what each step is, where it
is stored and the facts kept there (for a record: index document -> enriched -> mapped -> original ->
harvest request). ``ingest-assets lineage`` prints it (``--json`` for programs).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Step:
    what: str
    where: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Lineage:
    subject: str
    steps: list[Step]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False, default=str)

    def to_text(self) -> str:
        lines = [self.subject]
        for number, step in enumerate(self.steps, 1):
            lines.append(f"{number}. {step.what}: {step.where}")
            lines.extend(f"     {key}: {_text(value)}" for key, value in step.facts.items())
        return "\n".join(lines)


def _text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)
