"""JSON from providers: whatever the parser raises on hostile bytes comes out as one ``ValueError``."""

from __future__ import annotations

import gc
import json
from typing import Any


def loads(data: str | bytes) -> Any:
    """``json.loads`` whose failures, deep nesting included (``RecursionError``), are ``ValueError``s.

    Callers turn the ``ValueError`` into the typed error for their record or page, so one hostile document
    never ends a harvest or a batch. No garbage collection runs during the parse: one started near the
    recursion limit would run other objects' finalizers with no stack left, and their errors would be lost.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return json.loads(data)
    except RecursionError as exc:
        raise ValueError("nested too deeply to parse") from exc
    finally:
        if collecting:
            gc.enable()
