"""Fedora PIDs per the spec's Level 1 rules, normalized to the ``info:fedora`` URI form.

* providers and collections: ``K2N:`` + homepage/collection URI without scheme, slashes -> ``_``,
  lower-cased; characters outside the PID alphabet are %-escaped (UPPER-case hex);
* collection members: ``K2N:<type code>_<md5 of the item record>``;
* every PID matches the Fedora PID regex, is at most 60 bytes (the specification's "PIDs limited to 60 bytes";
  counted as UTF-8 bytes, so a character outside ASCII could never pass as one) and never in ``fedora-system``.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import unquote

from ingest_assets.core.errors import ValidationError

NAMESPACE = "K2N"
MAX_BYTES = 60
PID_RE = re.compile(r"([A-Za-z0-9]|-|\.)+:(([A-Za-z0-9])|-|\.|~|_|(%[0-9A-F]{2}))+")
TYPE_CODES = {"sound": "sd", "image": "im", "movie": "mv", "taxonpage": "tp", "identification tool": "id"}
TYPE_ALIASES = {"stillimage": "image", "still image": "image", "moving image": "movie", "movingimage": "movie",
                "video": "movie", "taxon page": "taxonpage", "identificationtool": "identification tool",
                "key": "identification tool"}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE_RE = re.compile(r"%([0-9A-Fa-f]{2})")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _escape(text: str) -> str:
    """Escape every character outside the unreserved set as UTF-8 ``%XX`` (upper-case hex)."""
    return "".join(
        ch if ch in _UNRESERVED else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        for ch in text
    )


def check_pid(pid: str) -> str:
    """Return ``pid`` if it is a valid, normalized PID of allowed length outside ``fedora-system``."""
    if not PID_RE.fullmatch(pid):
        raise ValidationError(f"PID {pid!r} does not match the Fedora PID pattern", record=pid)
    if len(pid.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise ValidationError(f"PID {pid!r} is longer than {MAX_BYTES} bytes", record=pid)
    if pid.split(":", 1)[0].lower() == "fedora-system":
        raise ValidationError(f"PID {pid!r} is in the reserved fedora-system namespace", record=pid)
    for match in _ESCAPE_RE.finditer(pid):
        if chr(int(match.group(1), 16)) in _UNRESERVED:
            raise ValidationError(f"PID {pid!r} escapes a character that needs no escaping", record=pid)
    return pid


def _fit(local: str) -> str:
    """Shorten an over-long local part (escaped: ASCII, one byte a character) to prefix + ``_`` + md5 (never
    cutting through a ``%XX``)."""
    room = MAX_BYTES - len(NAMESPACE) - 1
    if len(local) <= room:
        return local
    prefix = local[: room - 33]
    if "%" in prefix[-2:]:
        prefix = prefix[: prefix.rindex("%")]
    return f"{prefix}_{hashlib.md5(local.encode()).hexdigest()}"


def pid_from_uri(uri: str) -> str:
    """Provider/collection PID from a homepage or collection URI (Level 1 rule)."""
    text = _SCHEME_RE.sub("", uri.strip())
    text = unquote(text, errors="replace").lower().rstrip("/")
    if not text:
        raise ValidationError(f"cannot derive a PID from URI {uri!r}", record=uri)
    local = _fit(_escape(text.replace("/", "_")))
    return check_pid(f"{NAMESPACE}:{local}")


def type_code(resource_type: str) -> str:
    """Short code of a member's resource type (``sd``, ``im``, ``mv``, ``tp``, ``id``)."""
    key = re.sub(r"\s+", " ", resource_type.strip().lower())
    key = TYPE_ALIASES.get(key, key)
    if key not in TYPE_CODES:
        raise ValidationError(f"no PID type code for resource type {resource_type!r}")
    return TYPE_CODES[key]


def member_pid(code: str, item_record: bytes) -> str:
    """Collection member PID: type code + ``_`` + md5 of the item's XML record."""
    if code not in TYPE_CODES.values():
        raise ValidationError(f"unknown PID type code {code!r}")
    return check_pid(f"{NAMESPACE}:{code}_{hashlib.md5(item_record).hexdigest()}")
