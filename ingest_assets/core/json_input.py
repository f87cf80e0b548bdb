"""JSON from providers: whatever the parser raises on hostile bytes comes out as one ``ValueError``."""

from __future__ import annotations

import json
from typing import Any


def loads(data: str | bytes) -> Any:
    """``json.loads`` whose failures, deep nesting included (``RecursionError``), are ``ValueError``s.

    Callers turn the ``ValueError`` into the typed error for their record or page, so one hostile document
    never ends a harvest or a batch.
    """
    try:
        return json.loads(data)
    except RecursionError as exc:
        raise ValueError("nested too deeply to parse") from exc
