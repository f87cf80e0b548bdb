"""Where the platform keeps its files: backends (local, S3), the layout rules and Avro streaming."""

from ingest_assets.storage.backends import FolderWriter, LocalStorage, S3Storage, Storage, StoredText, open_storage

__all__ = ["FolderWriter", "LocalStorage", "S3Storage", "Storage", "StoredText", "open_storage"]
