"""S3 clients from dagster-aws's ``S3Resource``, built the same way on the driver and on Spark executors."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from dagster_aws.s3 import S3Resource

from ingest_assets.storage import Storage, open_storage


def s3_client(config: dict[str, Any]):
    """A boto3 S3 client from ``S3Resource`` settings (a plain dict, so it pickles to executors)."""
    return S3Resource(**config).get_client()


def storage_opener(url: str, s3: S3Resource) -> Callable[[], Storage]:
    """``open_storage(url)`` with the S3 client of ``s3``, as a picklable callable."""
    return partial(open_storage, url, s3_client=partial(s3_client, s3.model_dump()))
