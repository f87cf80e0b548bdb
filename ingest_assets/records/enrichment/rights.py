"""Normalized rightsstatements.org and Creative Commons URIs."""

from __future__ import annotations

import re
from functools import lru_cache

_RIGHTS_URI = re.compile(
    r"^\s*https?://(?:www\.)?(rightsstatements\.org|creativecommons\.org)(/[^?#\s]*)?(?:[?#]\S*)?\s*$",
    re.IGNORECASE,
)
_CC_SUFFIX = re.compile(r"/(?:legalcode(?:\.[a-z-]+)?|deed(?:\.[a-z-]+)?)/?$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def normalize_rights(value: str) -> str | None:
    """The canonical form of a rights URI (http, ``/vocab/``, trailing slash, no query or fragment,
    no CC ``legalcode``/``deed`` suffix), or ``None`` when it is not one."""
    match = _RIGHTS_URI.match(value)
    if match is None:
        return None
    host = match.group(1).lower()
    path = match.group(2) or "/"
    if host == "rightsstatements.org":
        path = path.replace("/page/", "/vocab/", 1)
    else:
        path = _CC_SUFFIX.sub("/", path.lower())
    if not path.endswith("/"):
        path += "/"
    if path == "/":
        return None
    return f"http://{host}{path}"
