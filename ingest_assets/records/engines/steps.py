"""The per-record work of mapping, enrichment and indexing, shared by both engines (in-process and Spark).

    activity = RecordActivity("mapping", entry)
    report = activity.new_report()
    steps = activity.steps(report)           # one function per input, record -> record | None
    activity.logs(report), activity.summary(report)

Each engine applies the same steps; Spark builds them once per task and merges the tasks' reports
(``report.merge``) in input order, so counts and first examples match an in-process run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from itertools import chain, islice
from operator import is_not
from typing import Any

from ingest_assets.records.enrichment import EnrichmentReport, chain_for
from ingest_assets.records.indexing import deletion_record, index_record
from ingest_assets.records.mapping import MappingReport, mapper_for, minter_for
from ingest_assets.records.mapping.report import COVERAGE_LOG, Coverage
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.indexing.absences import Absences
from ingest_assets.storage.activities import RecordSource, RecordStream

Step = Callable[[dict], "dict | None"]
_given = partial(is_not, None)  # a step's output that is a record
BURST = 64  # the inputs a step takes at a time (:func:`applied`)


def applied(step: Step, source: Iterable[dict]) -> Iterator[dict]:
    """``step``'s records of ``source`` in order, made a burst of :data:`BURST` inputs at a time: the input's
    decoding, the step and the writing of its records each run over a burst in turn instead of taking turns on
    every record, so each keeps its code and data in the CPU's caches (about 10% of a record's CPU time, see
    ``benchmarks/README.md``). Memory holds one burst."""
    inputs = iter(source)
    bursts = iter(lambda: list(islice(inputs, BURST)), [])
    return chain.from_iterable(map(partial(_burst, step), bursts))


def _burst(step: Step, burst: list[dict]) -> list[dict]:
    return list(filter(_given, map(step, burst)))


class IndexingReport:
    """Counts of the indexing activity: documents built, deletions passed on from the harvest, and deletions
    of records a full harvest no longer holds (``absent``; ``absences`` says why none were looked for)."""

    def __init__(self) -> None:
        self.documents = 0
        self.deletions = 0
        self.absent = 0
        self.absences = ""

    def merge(self, other: "IndexingReport") -> None:
        self.documents += other.documents
        self.deletions += other.deletions
        self.absent += other.absent

    def metadata(self) -> dict[str, int | str]:
        figures: dict[str, int | str] = {"documents": self.documents, "deletions": self.deletions, "absent": self.absent}
        if self.absences:
            figures["absences"] = self.absences
        return figures

    def csv(self) -> bytes:
        """The totals, in the mapping and enrichment reports' ``kind,field,count`` shape."""
        rows = ["kind,field,count", f"total,documents,{self.documents}", f"total,deletions,{self.deletions}",
                f"total,absent,{self.absent}"]
        return ("\n".join(rows) + "\n").encode("utf-8")


class CoveredEnrichmentReport(EnrichmentReport):
    """The enrichment report plus the field coverage of the records the activity wrote (``_LOGS/coverage.json``:
    the day report's, counted while writing instead of reading the output again)."""

    def __init__(self) -> None:
        super().__init__()
        self.coverage = Coverage()

    def merge(self, other: "CoveredEnrichmentReport") -> None:
        super().merge(other)
        self.coverage.merge(other.coverage)


@dataclass(frozen=True)
class RecordActivity:
    """One record activity of one provider: ``mapping`` (input: harvest), ``enrichment`` (input: mapping)
    or ``indexing`` (inputs: enrichment, then harvest for its deletions and, when it is full, its absences;
    ``never_published``: days left out of the provider's previous state)."""

    activity: str
    entry: ProviderEntry
    never_published: frozenset[date] = frozenset()

    def new_report(self):
        return {"mapping": MappingReport, "enrichment": CoveredEnrichmentReport, "indexing": IndexingReport}[self.activity]()

    def steps(self, report) -> list[Step]:
        """One step per input, in input order; a step returns ``None`` for a record that yields nothing."""
        if self.activity == "mapping":
            map_record, add = mapper_for(self.entry).map, report.add  # looked up once

            def map_one(original: dict) -> dict | None:
                result = map_record(original)
                add(result)
                return result.record

            return [map_one]
        if self.activity == "enrichment":
            enrich, add, cover = chain_for(self.entry).enrich, report.add, report.coverage.add  # looked up once

            def enrich_one(record: dict) -> dict:
                result, changes = enrich(record)
                add(record["id"], changes, (record, result))
                cover(result)
                return result

            return [enrich_one]
        mint = minter_for(self.entry)

        def document(record: dict) -> dict:
            report.documents += 1
            return index_record(record)

        def deletion(original: dict) -> dict | None:
            if not original.get("deleted"):
                return None
            report.deletions += 1
            return deletion_record(mint(original["id"]))

        return [document, deletion]

    def reads(self, index: int, source: RecordSource) -> bool:
        """Whether input ``index`` can give its step anything: indexing reads the harvest for its deletions only
        when the harvest's ``_MANIFEST`` counts some (it counted them while writing; a harvest output written by
        other software, without the count, is read)."""
        if self.activity != "indexing" or index != 1:
            return True
        deleted = source.manifest().extra.get("Summary deleted")
        return deleted is None or int(deleted) > 0

    def tail(self, report, inputs: Sequence[RecordSource]) -> Iterator[dict]:
        """Records the activity adds after its inputs' (run by the driver, not per part): indexing's deletions
        of the records a full harvest no longer holds."""
        if self.activity != "indexing":
            return
        absences = Absences(inputs[1], self.never_published)
        report.absences = absences.skipped
        for local_id in absences.ids():
            report.absent += 1
            yield deletion_record(minter_for(self.entry)(local_id))

    def logs(self, report) -> Mapping[str, bytes]:
        """The ``_LOGS`` files of the output."""
        logs = {f"{self.activity}-report.csv": report.csv()}
        if self.activity == "enrichment":
            logs[COVERAGE_LOG] = report.coverage.to_bytes()
        return logs

    def summary(self, report) -> Mapping[str, Any]:
        return report.metadata()


def in_process(activity: RecordActivity, inputs: Sequence[RecordSource]) -> RecordStream:
    """The activity in this process: a lazy stream over its inputs, one record at a time."""
    report = activity.new_report()
    steps = activity.steps(report)
    read = ((step, source) for index, (step, source) in enumerate(zip(steps, inputs, strict=True))
            if activity.reads(index, source))
    records = chain(chain.from_iterable(applied(step, source) for step, source in read), activity.tail(report, inputs))
    return RecordStream(
        records, inputs=list(inputs), logs=lambda: activity.logs(report), summary=lambda: activity.summary(report)
    )
