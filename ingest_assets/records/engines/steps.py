"""The per-record work of mapping, enrichment and indexing, shared by both engines (in-process and Spark).

    activity = RecordActivity("mapping", entry)
    report = activity.new_report()
    steps = activity.steps(report)           # one function per input, record -> record | None
    activity.logs(report), activity.summary(report)

Each engine applies the same steps; Spark builds them once per task and merges the tasks' reports
(``report.merge``) in input order, so counts and first examples match an in-process run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import chain
from typing import Any

from ingest_assets.records.enrichment import EnrichmentReport, chain_for
from ingest_assets.records.indexing import deletion_record, index_record
from ingest_assets.records.mapping import MappingReport, mapper_for, minter_for
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.indexing.absences import Absences
from ingest_assets.storage.activities import RecordSource, RecordStream

Step = Callable[[dict], "dict | None"]


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


@dataclass(frozen=True)
class RecordActivity:
    """One record activity of one provider: ``mapping`` (input: harvest), ``enrichment`` (input: mapping)
    or ``indexing`` (inputs: enrichment, then harvest for its deletions and, when it is full, its absences;
    ``never_published``: days left out of the provider's previous state)."""

    activity: str
    entry: ProviderEntry
    never_published: frozenset[date] = frozenset()

    def new_report(self):
        return {"mapping": MappingReport, "enrichment": EnrichmentReport, "indexing": IndexingReport}[self.activity]()

    def steps(self, report) -> list[Step]:
        """One step per input, in input order; a step returns ``None`` for a record that yields nothing."""
        if self.activity == "mapping":
            mapper = mapper_for(self.entry)

            def map_one(original: dict) -> dict | None:
                result = mapper.map(original)
                report.add(result)
                return result.record

            return [map_one]
        if self.activity == "enrichment":
            chain = chain_for(self.entry)

            def enrich_one(record: dict) -> dict:
                result, changes = chain.enrich(record)
                report.add(record["id"], changes, samples=(record, result))
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
        return {f"{self.activity}-report.csv": report.csv()}

    def summary(self, report) -> Mapping[str, Any]:
        return report.metadata()


def in_process(activity: RecordActivity, inputs: Sequence[RecordSource]) -> RecordStream:
    """The activity in this process: a lazy stream over its inputs, one record at a time."""
    report = activity.new_report()
    steps = activity.steps(report)
    records = chain(
        (out for step, source in zip(steps, inputs, strict=True) for out in map(step, source) if out is not None),
        activity.tail(report, inputs),
    )
    return RecordStream(
        records, inputs=list(inputs), logs=lambda: activity.logs(report), summary=lambda: activity.summary(report)
    )
