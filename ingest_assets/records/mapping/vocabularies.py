"""Vocabularies: shipped data files a rule looks values up in (``lookup:``) or filters them by (``exclude_terms:``,
``keep_terms:``), so no table lives in code.

A vocabulary is ``vocabularies/<name>.yaml`` beside this module (or in the ``vocabularies`` folder of the
profiles folder the settings name, which extends the shipped set)::

    description: what it holds and where it comes from
    terms: [image/jpeg, Archive BitTorrent]     # a term list: compared case-insensitively, spaces trimmed
    # or
    table: {UNT: UNT Libraries}                 # a lookup table: key (case-insensitive) -> value
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ingest_assets.core.errors import ConfigError

FOLDER = "vocabularies"


class _VocabularyFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    description: Annotated[str, Field(min_length=1)]
    terms: Annotated[list[str], Field(min_length=1)] | None = None
    table: Annotated[dict[str, str], Field(min_length=1)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _text_keys(cls, data: Any) -> Any:
        """Table keys and terms as text (YAML reads ``yes``, ``1`` and ``null`` as other types)."""
        if isinstance(data, dict):
            data = dict(data)
            if isinstance(data.get("table"), dict):
                data["table"] = {str(key): value for key, value in data["table"].items()}
            if isinstance(data.get("terms"), list):
                data["terms"] = [str(term) for term in data["terms"]]
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> _VocabularyFile:
        if (self.terms is None) == (self.table is None):
            raise ValueError("give 'terms' (a term list) or 'table' (key -> value), not both or neither")
        return self


@dataclass(frozen=True)
class Vocabulary:
    """``terms`` (casefolded, trimmed) or ``table`` (casefolded, trimmed key -> value)."""

    name: str
    description: str
    terms: frozenset[str] | None = None
    table: Mapping[str, str] | None = None


def key(value: str) -> str:
    """How values are compared with terms and table keys."""
    return value.strip().casefold()


def read_vocabulary(name: str, text: str, source: str) -> Vocabulary:
    try:
        spec = _VocabularyFile.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ConfigError(f"vocabulary {name!r}: not valid YAML: {exc}", file=source) from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "file"
        raise ConfigError(f"vocabulary {name!r}: {where}: {error['msg']}", file=source) from None
    terms = frozenset(key(term) for term in spec.terms) if spec.terms is not None else None
    table = {key(k): v.strip() for k, v in spec.table.items()} if spec.table is not None else None
    return Vocabulary(name, spec.description, terms, table)


def shipped() -> dict[str, Vocabulary]:
    """The vocabularies shipped with the package."""
    folder = files(__package__).joinpath(FOLDER)
    return {
        entry.name.removesuffix(".yaml"): read_vocabulary(
            entry.name.removesuffix(".yaml"), entry.read_text(encoding="utf-8"), f"{__package__}/{FOLDER}/{entry.name}")
        for entry in folder.iterdir() if entry.name.endswith(".yaml")
    }


def from_folder(folder: Path, known: Iterable[str]) -> dict[str, Vocabulary]:
    """The vocabularies of a profiles folder's ``vocabularies/`` (none when it has none); a name the shipped set
    has already is refused."""
    found: dict[str, Vocabulary] = {}
    taken = set(known)
    for path in sorted((folder / FOLDER).glob("*.yaml")):
        if path.stem in taken:
            raise ConfigError(f"vocabulary {path.stem!r} is shipped already: give yours another name", file=str(path))
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the vocabulary: {exc.strerror}", file=str(path)) from None
        found[path.stem] = read_vocabulary(path.stem, text, str(path))
    return found
