"""The code location: the shared wiring and each capability's definitions, built from the settings and merged.

Every part of ``defs/`` has the same builder, ``build_defs(settings) -> dg.Definitions``, binding its own resources
(the shared ones in :mod:`ingest_assets.defs.shared`). Nothing is built at import: ``defs`` is loaded by
``dagster dev``, ``dg`` and the daemon when they load the code location.
"""

from __future__ import annotations

import warnings

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs import datasets, linked_data, operations, records, repository, resourcesync, shared

PARTS = (shared, records, linked_data, repository, datasets, resourcesync, operations)


def build_definitions(settings: Settings | None = None) -> dg.Definitions:
    """Every part's definitions for ``settings`` (default: the process's)."""
    settings = settings or Settings.current()
    with warnings.catch_warnings():
        # features of the pinned Dagster we use on purpose: backfill policies (beta), partitioned checks (preview)
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.Definitions.merge(*(part.build_defs(settings) for part in PARTS))


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions()
