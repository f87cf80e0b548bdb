"""The repository a target names: ``http(s)://.../rest`` is Fedora 6, anything else an OCFL root folder."""

from __future__ import annotations

from ingest_assets.core.http import HttpClient
from ingest_assets.repository.backend import Repository


def open_repository(target: str, *, http: HttpClient | None = None, auth: tuple[str, str] | None = None) -> Repository:
    """``auth``: the Fedora user and password (settings ``FEDORA_USER`` / ``FEDORA_PASSWORD``), if it needs them.
    Only the chosen backend's libraries are imported."""
    if target.startswith(("http://", "https://")):
        # the Fedora URL is operator configuration, not provider input: private addresses are fine
        from ingest_assets.repository.fedora import FedoraRepository

        client = http or HttpClient(allow_private=True)
        if auth:
            client.session.auth = auth
        return FedoraRepository(target, client)
    from ingest_assets.repository.ocfl import OcflRepository

    return OcflRepository(target)
