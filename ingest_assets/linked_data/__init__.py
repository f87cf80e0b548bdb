"""Linked-data harvest (GeoLink): VoID-driven imports of RDF dumps into per-provider named graphs."""
