"""A dataset file's media type when its platform declares none: from its name, else from its first bytes.

The name decides first (``mimetypes``: ``frequent_terms.csv`` is ``text/csv``; a compressed name is its
compression's type, ``x.tsv.gz`` ``application/gzip``); a name that says nothing (``full_dataset.tsv.gz.part-aa``)
is judged by its first :data:`HEAD_BYTES` (``filetype``'s magic numbers), then as text when they are UTF-8,
else ``application/octet-stream``.
"""

from __future__ import annotations

import mimetypes

import filetype

HEAD_BYTES = 8192  # what filetype reads
ENCODINGS = {"gzip": "application/gzip", "bzip2": "application/x-bzip2", "xz": "application/x-xz",
             "compress": "application/x-compress", "br": "application/x-brotli"}


def file_type(name: str, head: bytes) -> str:
    """The media type of a file called ``name`` (its last path segment counts) whose bytes start with ``head``."""
    guessed, encoding = mimetypes.guess_type(name.rsplit("/", 1)[-1], strict=False)
    if encoding:
        return ENCODINGS.get(encoding, "application/octet-stream")
    if guessed:
        return guessed
    kind = filetype.guess(head[:HEAD_BYTES])
    if kind is not None:
        return kind.mime
    try:
        head[:HEAD_BYTES].decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut by the end of the head is still text
        if exc.start < len(head[:HEAD_BYTES]) - 3:
            return "application/octet-stream"
    return "text/plain" if head else "application/octet-stream"
