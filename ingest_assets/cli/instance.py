"""The Dagster instance the commands run on (``demo``, ``harvest``, ``ui``): ``DAGSTER_HOME``, or by default
``$INGEST_HOME/dagster`` with the shipped ``dagster.yaml`` (run limits per provider, telemetry off), so nothing
of Dagster's lands in the current folder."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from ingest_assets.core.settings import Settings

if TYPE_CHECKING:
    import dagster as dg


def instance_home(settings: Settings) -> Path:
    """The instance folder, created; the default one (``$INGEST_HOME/dagster``) gets the shipped ``dagster.yaml``
    when it has none (a folder given as ``DAGSTER_HOME`` is left as its owner configured it)."""
    home = settings.dagster_home or settings.home / "dagster"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if home == settings.home / "dagster" and not config.exists():
        config.write_bytes(files("ingest_assets.cli").joinpath("dagster.yaml").read_bytes())
    return home


def open_instance(settings: Settings) -> "dg.DagsterInstance":
    import dagster as dg

    return dg.DagsterInstance.from_config(str(instance_home(settings)))
