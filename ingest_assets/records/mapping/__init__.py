"""Mapping: OriginalRecord dicts -> MAP4_x MAPRecord dicts (oai_dc, qualified DC, MODS), per provider.

    mapper = mapper_for(provider_entry)      # registry `mapping:` and optional `mapping_overrides:`
    result = mapper.map(original_record)     # MappingResult(record | None, messages)
    report.add(result)                       # MappingReport: summary(), csv(), metadata()

Registry example (rule keys are described in ``rules.py``; XPaths are relative to the metadata element)::

    maryland:
      label: Digital Maryland
      mapping: qdc
      mapping_overrides:
        dataProvider: {value: Maryland State Archives}          # a constant replaces the rule
        isShownAt: {pattern: '^https?://collections\\.digitalmaryland\\.org/'}   # merged onto the qdc rule
        object: {xpath: 'dc:identifier', pattern: '/collection/(?P<c>[^/]+)/id/(?P<i>\\d+)',
                 template: 'http://webconfig.digitalmaryland.org/utils/getthumbnail/collection/{c}/id/{i}'}
        subject: null                                           # not mapped

A Mapper compiles its XPaths once and keeps its own lxml parser: build one per thread or process.
"""

from ingest_assets.records.mapping.mapper import Mapper, MappingResult, Message, mapper_for, mint_id
from ingest_assets.records.mapping.report import MappingReport

__all__ = ["Mapper", "MappingReport", "MappingResult", "Message", "mapper_for", "mint_id"]
