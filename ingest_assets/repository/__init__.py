"""Repository ingest (Key to Nature): wiki template records -> DC/K2N objects in Fedora 6 or OCFL.

Domain code only (no Dagster): sources, markup cleaning, mapping, PIDs, validation and reports,
repository backends, the object index, the transactional bookkeeping and the ingest/removal services.
:func:`open_repository` opens the backend a repository target (``INGEST_REPOSITORY``) names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ingest_assets.repository.backend import Repository

if TYPE_CHECKING:
    from ingest_assets.core.http import HttpClient


def open_repository(target: str, *, http: HttpClient | None = None, auth: tuple[str, str] | None = None) -> Repository:
    """``http(s)://.../rest`` -> Fedora 6, anything else an OCFL root folder. ``auth``: the Fedora user and password
    (settings ``FEDORA_USER`` / ``FEDORA_PASSWORD``), if it needs them. Only the chosen backend's libraries are
    imported."""
    if target.startswith(("http://", "https://")):
        # the Fedora URL is operator configuration, not provider input: private addresses are fine
        from ingest_assets.core.http import HttpClient
        from ingest_assets.repository.fedora import FedoraRepository

        client = http or HttpClient(allow_private=True)
        if auth:
            client.session.auth = auth
        return FedoraRepository(target, client)
    from ingest_assets.repository.ocfl import OcflRepository

    return OcflRepository(target)
