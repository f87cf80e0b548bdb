"""S3 clients from dagster-aws's ``S3Resource``, built the same way on the driver and on Spark executors."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ingest_assets.storage import Storage, open_storage


def s3_client(config: dict[str, Any]):
    """A boto3 S3 client from ``S3Resource`` settings (a plain dict, so it pickles to executors)."""
    from dagster_aws.s3 import S3Resource  # only S3 storage pays for importing dagster-aws and boto3

    return S3Resource(**config).get_client()


def storage_opener(url: str, s3: dict[str, Any]) -> Callable[[], Storage]:
    """``open_storage(url)`` with the client of ``S3Resource(**s3)``, as a picklable callable."""
    if url.startswith("s3://"):
        from dagster_aws.s3 import S3Resource

        S3Resource(**s3)  # invalid settings fail here, not on an executor
    return partial(open_storage, url, s3_client=partial(s3_client, dict(s3)))
