"""The schema files shipped with the package: Avro record schemas, search-index mappings and SQL DDL.

Read through ``importlib.resources``, so they are found in a wheel as in a checkout.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any


def read_text(name: str) -> str:
    """The text of the schema file ``name`` (e.g. ``dpla.avro.v1.OriginalRecord.avsc``)."""
    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def read_json(name: str) -> Any:
    return json.loads(read_text(name))
