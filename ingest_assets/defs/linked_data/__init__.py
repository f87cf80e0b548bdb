"""Linked-data (GeoLink) wiring: VoID sensor, provider graphs, export, and the triple store resource."""

import dagster as dg

from ingest_assets.defs.linked_data.assets import linked_data_export, provider_graph
from ingest_assets.defs.linked_data.sensors import void_sensor

defs = dg.Definitions(
    assets=[provider_graph, linked_data_export],
    sensors=[void_sensor],
)
