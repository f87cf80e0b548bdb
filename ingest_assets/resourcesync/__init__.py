"""ResourceSync publishing: a resource index and change log (embedded SQL or Elasticsearch), the v1.1
documents generated from it as static files, and a small server (``ingest-assets serve-resourcesync``)."""
