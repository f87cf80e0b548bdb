"""Repository ingest (Key to Nature): wiki template records -> DC/K2N objects in Fedora 6 or OCFL.

Domain code only (no Dagster): sources, markup cleaning, mapping, PIDs, validation and reports,
repository backends, the object index, the transactional bookkeeping and the ingest/removal services.
"""
