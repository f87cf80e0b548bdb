"""Linked-data (GeoLink) wiring: the VoID sensor, provider graphs, their export, and the triple store resource."""

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.linked_data.assets import linked_data_export, provider_graph
from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.defs.linked_data.sensors import void_sensor


def build_defs(settings: Settings) -> dg.Definitions:
    return dg.Definitions(
        assets=[provider_graph, linked_data_export],
        sensors=[void_sensor],
        resources={"triplestore": TripleStoreResource.from_settings(settings)},
    )
