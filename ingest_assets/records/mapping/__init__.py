"""Mapping: OriginalRecord dicts -> MAP4_x MAPRecord dicts, per provider, through a profile.

    mapper = mapper_for(provider_entry)      # registry `mapping:` (a profile) and optional `mapping_overrides:`
    result = mapper.map(original_record)     # MappingResult(record | None, messages)
    report.add(result)                       # MappingReport: summary(), csv(), metadata()

Profiles are data files (``profiles/*.yaml``: the stock oai_dc, qdc, mods and one per ingestion3 hub mapping; see
``profiles/__init__.py``) whose field rules hold XPaths for XML sources or JMESPath expressions for JSON ones: the
rule language is checked by ``model.py`` and compiled by ``rules.py`` (clean functions ``cleaning.py``, shipped
vocabularies ``vocabularies.py``). ``check_registry`` compiles a loaded registry's profiles and overrides before
anything runs. Registry example::

    maryland:
      label: Digital Maryland
      mapping: qdc
      mapping_overrides:
        dataProvider: {default: Maryland State Archives}                        # when the source has none
        isShownAt: {pattern: '^https?://collections\\.digitalmaryland\\.org/'}   # merged onto the qdc rule
        object: {xpath: 'dc:identifier', pattern: '/collection/(?P<c>[^/]+)/id/(?P<i>\\d+)',
                 template: 'http://webconfig.digitalmaryland.org/utils/getthumbnail/collection/{c}/id/{i}'}
        subject: null                                           # not mapped

``preview.py`` maps files or a provider's newest harvest without writing (``ingest-assets map``).
A Mapper compiles its paths once and keeps its own lxml parser: build one per thread or process.
"""

from ingest_assets.records.mapping.mapper import (
    Mapper,
    MappingResult,
    Message,
    base_id_for,
    check_registry,
    mapper_for,
    minter_for,
    mint_id,
)
from ingest_assets.records.mapping.report import MappingReport

__all__ = ["Mapper", "MappingReport", "MappingResult", "Message", "base_id_for", "check_registry", "mapper_for",
           "minter_for", "mint_id"]
