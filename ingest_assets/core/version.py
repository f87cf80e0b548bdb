"""The software version stamped into every file the platform writes (worked out on first use, not at import:
it may ask git)."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ingest_assets.core.settings import Settings


def _package_version() -> str:
    try:
        return version("ingest-assets")
    except PackageNotFoundError:
        return "0.0.0"


def _git_commit() -> str | None:
    if Settings.current().git_commit:
        return Settings.current().git_commit
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


@cache
def software_version() -> str:
    """Package version plus ``+g<commit>`` when the git commit is known (PEP 440 local label)."""
    commit = _git_commit()
    return f"{_package_version()}+g{commit}" if commit else _package_version()

