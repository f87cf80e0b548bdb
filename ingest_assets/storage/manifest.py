"""``_MANIFEST`` (plain ``Key: value`` lines, as Ingestion 3 writes them), ``-prov.json`` and plan files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class Manifest:
    activity: str
    provider: str
    schema: str
    record_count: int
    start_time: datetime
    software_version: str
    partition: str
    inputs: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        lines = [
            f"Activity: {self.activity}",
            f"Provider: {self.provider}",
            f"Schema: {self.schema}",
            f"Partition: {self.partition}",
            f"Record count: {self.record_count}",
            f"Start time: {self.start_time.isoformat()}",
            f"Software version: {self.software_version}",
            *(f"Input: {path}" for path in self.inputs),
            *(f"{key}: {value}" for key, value in self.extra.items()),
        ]
        return ("\n".join(lines) + "\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> "Manifest":
        values: dict[str, str] = {}
        inputs: list[str] = []
        for line in data.decode("utf-8").splitlines():
            key, sep, value = line.partition(": ")
            if not sep:
                continue
            if key == "Input":
                inputs.append(value)
            else:
                values[key] = value
        known = {"Activity", "Provider", "Schema", "Partition", "Record count", "Start time", "Software version"}
        return cls(
            activity=values["Activity"],
            provider=values["Provider"],
            schema=values["Schema"],
            partition=values["Partition"],
            record_count=int(values["Record count"]),
            start_time=datetime.fromisoformat(values["Start time"]),
            software_version=values["Software version"],
            inputs=inputs,
            extra={k: v for k, v in values.items() if k not in known},
        )


def prov_document(inputs: list[str], version: str) -> bytes:
    """``{"generator": <first input>, "inputs": [<every input>], "version": ...}``, Avro paths relative to the
    provider folder: the same inputs, in the same order, as the output's ``_MANIFEST``."""
    document = {"generator": inputs[0] if inputs else None, "inputs": inputs, "version": version}
    return json.dumps(document, indent=2).encode("utf-8")


def plan_document(activities: dict[str, str], version: str) -> bytes:
    """``{<activity>: <avro path>, ..., "version": ...}``."""
    return json.dumps({**activities, "version": version}, indent=2).encode("utf-8")
