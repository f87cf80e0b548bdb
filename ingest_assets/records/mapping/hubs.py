"""The hubs DPLA's ingestion3 harvests, shipped as registry entries (``hubs.yaml``, beside the profiles): each with
its harvest block and profile as ingestion3 binds them, its S3 prefix and its display name (DPLA's hub identity
mapping). A hub starts from one: :func:`add_hub` copies its entry, comments and all, into an operator's registry.

    hubs = shipped_hubs()                    # a Registry of every shipped entry (placeholders kept), checked whole
    add_hub("nara", Path("registry.yaml"))   # the entry appended to the file, atomically; what still needs filling in
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

import yaml

from ingest_assets.core.errors import ConfigError, UsageError
from ingest_assets.core.registry import ProviderEntry, Registry, load_registry, parse_registry
from ingest_assets.records.mapping.mapper import check_registry

SHIPPED = "hubs.yaml"


def shipped_text() -> str:
    return files(__package__).joinpath(SHIPPED).read_text(encoding="utf-8")


def shipped_source() -> str:
    """The shipped file's name in errors: its path in the installed package."""
    return str(files(__package__).joinpath(SHIPPED))


@cache
def shipped_hubs() -> Registry:
    """Every shipped hub, its entry checked strictly and its profile compiled (a private delivery's placeholder
    kept). Any problem is a ConfigError naming hub, key and file: the package itself is broken."""
    source = shipped_source()
    hubs = parse_registry(yaml.safe_load(shipped_text()), source, shipped=True)
    check_registry(hubs)
    if hubs.problems:
        raise next(iter(hubs.problems.values()))
    return hubs


def shipped_hub(name: str) -> ProviderEntry:
    """The shipped entry ``name``; an unknown hub is a UsageError listing the known ones."""
    hubs = shipped_hubs()
    if name not in hubs:
        raise UsageError(f"no shipped hub {name!r}", hint=f"shipped hubs: {', '.join(sorted(hubs))}")
    return hubs[name]


def entry_texts() -> dict[str, str]:
    """Each shipped entry's YAML text, the comment above it included: the file's blank-line-separated blocks after
    its header, one entry each."""
    texts = {}
    for block in shipped_text().split("\n\n")[1:]:
        [name] = yaml.safe_load(block)
        texts[name] = block.strip("\n") + "\n"
    return texts


@dataclass(frozen=True)
class AddedHub:
    """What :func:`add_hub` did: the entry it copied, the registry file, and what still needs filling in (each
    placeholder key below ``harvest`` and what goes there; empty: the entry runs as it is)."""

    entry: ProviderEntry
    registry: Path
    fill_in: dict[str, str]


def add_hub(name: str, registry: Path) -> AddedHub:
    """Append the shipped entry ``name`` to the registry file ``registry`` (made when absent), replacing the file
    atomically; the file's own text is kept as it is. Refused (UsageError) when the file already has an entry of
    that name; a file that does not load is its ConfigError, and nothing is written."""
    shipped_hub(name)  # an unknown hub stops here, listing the shipped ones
    existing = registry.read_text(encoding="utf-8") if registry.exists() else ""
    if existing.strip():
        load_registry(registry)  # a file that does not parse stops here, naming it
        if name in (yaml.safe_load(existing) or {}):
            raise UsageError(f"{registry} already has an entry {name!r}",
                             hint="edit that entry, or remove it to start again from the shipped one")
    separator = "" if not existing or existing.endswith("\n\n") else "\n" if existing.endswith("\n") else "\n\n"
    text = f"{existing}{separator}{entry_texts()[name]}"
    added = parse_registry(yaml.safe_load(text), str(registry), shipped=True)[name]
    _replace(registry, text)
    harvest = added.settings.harvest
    return AddedHub(added, registry, dict(harvest.fill_in) if harvest is not None else {})


def _replace(path: Path, text: str) -> None:
    """``path`` holds ``text`` afterwards, or is as it was (a temporary file beside it, renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        raise ConfigError(f"cannot write the registry file: {exc.strerror or exc}", file=str(path)) from None
    finally:
        temporary.unlink(missing_ok=True)
