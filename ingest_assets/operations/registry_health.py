"""The registry's health in words: what ``ingest-assets status``, the registry check and the status page say."""

from __future__ import annotations

from ingest_assets.core.registry import Registry


def registry_problems(registry: Registry) -> list[str]:
    """One line per problem, most serious first: a registry file that no longer loads (the hub then runs on its
    last good copy), then each refused entry with its key and file (the other entries keep running)."""
    lines = []
    if registry.stale:
        lines.append(f"REGISTRY FILE DOES NOT LOAD, running on its last good copy: {registry.stale}")
    lines += [f"entry {name!r} refused (the others run): {error}" for name, error in sorted(registry.problems.items())]
    return lines
