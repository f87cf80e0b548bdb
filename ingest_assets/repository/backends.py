"""Choose the repository backend from one setting: an http(s) URL is Fedora 6, anything else an OCFL root."""

from __future__ import annotations

from ingest_assets.http import HttpClient
from ingest_assets.repository.store import Repository


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
    from ingest_assets.repository.ocfl_store import OcflRepository

    return OcflRepository(target)
