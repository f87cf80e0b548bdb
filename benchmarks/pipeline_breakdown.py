"""Where one worker's record pipeline spends its CPU: per step and check, and per kind of work, against the raw side.

    uv run python benchmarks/pipeline_breakdown.py --records 400000 --workers 2 [--publish]

Runs one worker's share of ``records_pipeline.py --records N --workers W`` (the same three providers, oai_dc /
QDC / MODS, ``N / W`` records) in a child process per side (raw, then pipeline), each under a CPU-time sampling
profiler (``ITIMER_PROF``: a sample per ``--interval`` of CPU, so other jobs on a loaded machine do not count).
Each sample goes to the Dagster step its stack is in (the asset, check or IO manager of ours that is running) and
to the kind of work of the innermost frame a rule names (mapping walk, enrichment, Avro write, ...); the
samples of each side are scaled to its measured CPU seconds (user + sys of the process). Prints both tables, the
sides' CPU ratio, and the budget: what the pipeline's own work may cost per record at 0.8 of the raw side, against
what each kind of it costs. Needs ../shared/fixtures.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import importlib
import inspect
import resource
import signal
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import records_pipeline as pipeline  # noqa: E402 - the inputs and both sides of the throughput benchmark

# what is timed, each exclusive of what it calls that is timed too: (kind of work, module, attribute)
KINDS = (
    ("Avro read", "ingest_assets.storage.avro", "read_part"),
    ("Avro write", "ingest_assets.storage.avro", "Writer.write"),
    ("Avro write", "ingest_assets.storage.avro", "Writer.flush"),
    ("XML parse", "ingest_assets.records.mapping.mapper", "parse_document"),
    ("JSON parse", "ingest_assets.core.json_input", "loads"),
    ("mapping (walk, rules, record)", "ingest_assets.records.mapping.mapper", "Mapper.map"),
    ("mapping report", "ingest_assets.records.mapping.report", "MappingReport.add"),
    ("enrichment", "ingest_assets.records.enrichment.enrich", "Chain.enrich"),
    ("enrichment report", "ingest_assets.records.enrichment.report", "EnrichmentReport.add"),
    ("indexing documents", "ingest_assets.records.engines.steps", "index_record"),
    ("indexing documents", "ingest_assets.records.engines.steps", "deletion_record"),
    ("report CSVs (_LOGS)", "ingest_assets.records.engines.steps", "RecordActivity.logs"),
    ("absences", "ingest_assets.records.indexing.absences", "Absences.ids"),
    ("reconciliation, count checks", "ingest_assets.defs.records.checks", "harvest_balance"),
    ("reconciliation, count checks", "ingest_assets.defs.records.checks", "mapping_balance"),
    ("reconciliation, count checks", "ingest_assets.defs.records.checks", "indexing_balance"),
    ("reconciliation, count checks", "ingest_assets.defs.records.checks", "count_drop"),
    ("reconciliation, count checks", "ingest_assets.defs.records.checks", "judge_failure_rate"),
    ("manifests, prov, plan (lineage)", "ingest_assets.storage.activities", "prov_document"),
    ("manifests, prov, plan (lineage)", "ingest_assets.storage.activities", "_journal"),
    ("manifests, prov, plan (lineage)", "ingest_assets.storage.manifest", "Manifest.to_bytes"),
    ("manifests, prov, plan (lineage)", "ingest_assets.storage.manifest", "Manifest.from_bytes"),
    ("finding outputs (layout)", "ingest_assets.storage.layout", "latest_output"),
    ("finding outputs (layout)", "ingest_assets.storage.layout", "complete_outputs"),
    ("raw side: XML parse, record copy", "records_pipeline", "raw_mapping"),
    ("raw side: documents", "records_pipeline", "raw_documents"),
    ("day report", "ingest_assets.records.publishing.daily", "build_report"),
    ("candidate index", "ingest_assets.records.publishing.promotion", "build_candidate"),
    ("gates", "ingest_assets.records.publishing.gates", "judge"),
    ("gates", "ingest_assets.records.publishing.gates", "canary"),
)
REST = "the rest (Dagster, IO manager, engine glue)"
OWN_TIMING = "the breakdown's own timing (estimate)"  # not in a run
OUR_DEFS = "ingest_assets/defs/"


class Ledger:
    """Exclusive time per kind of work: the clock is charged to the innermost timed call running."""

    def __init__(self) -> None:
        self.seconds: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()  # timed calls (or generator steps) per kind
        self.callers: collections.Counter = collections.Counter()  # ... per kind they were made from
        self.stack = [REST]
        self.mark = time.perf_counter()

    def enter(self, kind: str) -> None:
        now = time.perf_counter()
        self.seconds[self.stack[-1]] += now - self.mark
        self.calls[kind] += 1
        self.callers[self.stack[-1]] += 1
        self.stack.append(kind)
        self.mark = now

    def leave(self) -> None:
        now = time.perf_counter()
        self.seconds[self.stack.pop()] += now - self.mark
        self.mark = now

    def timed(self, kind: str, func):
        """``func`` charged to ``kind``; a generator function's every step is."""
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def steps(*args, **kwargs):
                inner = func(*args, **kwargs)
                try:
                    while True:
                        self.enter(kind)
                        try:
                            item = next(inner)
                        except StopIteration:
                            return
                        finally:
                            self.leave()
                        yield item
                finally:
                    inner.close()

            return steps

        @functools.wraps(func)
        def call(*args, **kwargs):
            self.enter(kind)
            try:
                return func(*args, **kwargs)
            finally:
                self.leave()

        return call

    def own_timing(self, per_call: tuple[float, float]) -> None:
        """Take the timing's own cost out of the kinds it was charged to (``per_call``: seconds a timed call adds to
        its kind and to its caller's, from :func:`timing_cost`) into a kind of its own."""
        inner, outer = per_call
        for kind in list(self.seconds):
            cost = min(self.seconds[kind], self.calls[kind] * inner + self.callers[kind] * outer)
            self.seconds[kind] -= cost
            self.seconds[OWN_TIMING] += cost

    def collecting(self, phase: str, info: dict) -> None:
        """A ``gc.callbacks`` entry: the garbage collector's passes are a kind of their own."""
        if phase == "start":
            self.enter(f"garbage collection (generation {info['generation']})")
        else:
            self.leave()

    def install(self) -> None:
        """Wrap every function of ``KINDS`` where its callers look it up (a class's method on the class), and
        time the garbage collector."""
        gc.callbacks.append(self.collecting)
        for kind, module, attribute in KINDS:
            holder = importlib.import_module(module)
            *owner, name = attribute.split(".")
            if owner:
                if getattr(holder, owner[0]).__module__.startswith("fastavro"):  # a C class: time a subclass
                    setattr(holder, owner[0], type(owner[0], (getattr(holder, owner[0]),), {}))
                holder = getattr(holder, owner[0])
            setattr(holder, name, self.timed(kind, getattr(holder, name)))


def timing_cost(calls: int = 100_000) -> tuple[float, float]:
    """Seconds one timed call adds to the kind it times and to its caller's kind: a no-op, bare then timed."""
    def noop() -> None:
        pass

    start = time.perf_counter()
    for _ in range(calls):
        noop()
    bare = time.perf_counter() - start
    probe = Ledger()
    timed = probe.timed("probe", noop)
    probe.mark = time.perf_counter()
    for _ in range(calls):
        timed()
    probe.seconds[REST] += time.perf_counter() - probe.mark
    return probe.seconds["probe"] / calls, max(probe.seconds[REST] - bare, 0.0) / calls


def step_of(frames: list) -> str:
    """The step of a stack: the outermost frame of our Dagster wiring names it (an IO manager's by its asset)."""
    ours = [f for f in frames if OUR_DEFS in f.f_code.co_filename]
    if not ours:
        return "(run set-up, outside steps)"
    frame = ours[-1]
    name, local = frame.f_code.co_name, frame.f_locals
    if name in ("handle_output", "load_input") and "context" in local:
        return f"{local['context'].asset_key.to_user_string()} ({'write' if name == 'handle_output' else 'read'})"
    if name == "run" and "compute" in local:  # an asset's final_errors wrapper
        return local["compute"].__name__
    if name == "check" and "gate" in local:  # a publishing gate's check
        return f"check {local['gate']}"
    return name


class Sampler:
    """CPU-time samples per step (a sample is taken when Python next runs, after a C call: fine for steps, not
    for the kinds of work inside one, which the :class:`Ledger` times)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.counts: collections.Counter = collections.Counter()

    def __enter__(self) -> "Sampler":
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)

    def _sample(self, _signum, frame) -> None:
        frames = []
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        self.counts[step_of(frames)] += 1


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_side(side: str, records: int, workers: int, publish: bool, interval: float) -> dict:
    """One worker's share of one side, timed and sampled (in a child process of its own)."""
    import logging

    logging.disable(logging.INFO)  # Dagster's event log lines to stderr: not what a run's worker spends its CPU on
    with tempfile.TemporaryDirectory(prefix=f"breakdown-{side}-") as tmp:
        plan = pipeline.prepare(Path(tmp), records, workers)
        ledger = Ledger()
        ledger.install()
        before, ledger.mark = cpu_seconds(), time.perf_counter()
        started = ledger.mark
        with Sampler(interval) as sampler:
            if side == "raw":
                pipeline.run_raw(tmp, plan["0"])
            else:
                pipeline.run_pipeline(tmp, plan["0"], publish=publish)
        ledger.leave()  # the rest, up to now
        cpu, wall = cpu_seconds() - before, time.perf_counter() - started
    ledger.own_timing(timing_cost())
    count = records // (workers * len(pipeline.FORMATS)) * len(pipeline.FORMATS)
    samples = sum(sampler.counts.values()) or 1
    return {
        "cpu": cpu, "records": count, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "kinds": {kind: seconds * cpu / wall for kind, seconds in ledger.seconds.items()},  # clock shares of the CPU
        "steps": {step: n * cpu / samples for step, n in sampler.counts.items()},
    }


def report(raw: dict, piped: dict) -> str:
    lines = [f"one worker, {piped['records']:,} records; CPU seconds (user+sys of the process), split by the clock "
             "time of each kind of work", "", f"{'kind of work':<45}{'raw':>9}{'pipeline':>10}"]
    for kind in sorted(piped["kinds"].keys() | raw["kinds"].keys(), key=lambda k: -piped["kinds"].get(k, 0)):
        lines.append(f"{kind:<45}{raw['kinds'].get(kind, 0):>9.1f}{piped['kinds'].get(kind, 0):>10.1f}")
    lines += [f"{'total':<45}{raw['cpu']:>9.1f}{piped['cpu']:>10.1f}", "",
              "pipeline per step and check (CPU samples):"]
    for step, seconds in sorted(piped["steps"].items(), key=lambda item: -item[1]):
        lines.append(f"  {step:<43}{seconds:>19.1f}")
    lines += ["", f"records per CPU second: raw {raw['records'] / raw['cpu']:,.0f}, pipeline "
                  f"{piped['records'] / piped['cpu']:,.0f}; pipeline / raw CPU = {raw['cpu'] / piped['cpu']:.2f}; "
                  f"peak RSS raw {raw['peak_rss_mb']:,.0f} MB, pipeline {piped['peak_rss_mb']:,.0f} MB", *budget(raw, piped)]
    return "\n".join(lines)


def budget(raw: dict, piped: dict, target: float = 0.8) -> list[str]:
    """What the pipeline's own work (all it spends beyond the raw side) may cost per record at ``target`` of the
    raw side's rate, against what it costs, kind by kind (largest first; a kind only the raw side has is negative)."""
    per = 1e6 / piped["records"]
    extra = {kind: (piped["kinds"].get(kind, 0) - raw["kinds"].get(kind, 0)) * per
             for kind in piped["kinds"].keys() | raw["kinds"].keys()}
    spent = [(kind, us) for kind, us in sorted(extra.items(), key=lambda item: -item[1]) if round(us)]  # the raw
    # side's own kinds (its parse and record copy) count against the pipeline's, so the items add up
    allowed = raw["cpu"] * per * (1 / target - 1)
    return ["", f"per record at {target} of the raw side: the pipeline's own work may take {allowed:,.0f} us; it takes "
                f"{(piped['cpu'] - raw['cpu']) * per:,.0f} us (" + ", ".join(f"{kind} {us:,.0f}" for kind, us in spent) + ")"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=400_000, help="all workers' records (one worker's share is run)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--publish", action="store_true", help="the pipeline side also reports, gates and publishes")
    parser.add_argument("--interval", type=float, default=0.005, help="CPU seconds between samples")
    args = parser.parse_args()
    results = {}
    for side in ("raw", "pipeline"):
        with ProcessPoolExecutor(1) as pool:  # a fresh process per side: its own imports and heap
            results[side] = pool.submit(run_side, side, args.records, args.workers, args.publish, args.interval).result()
    print(report(results["raw"], results["pipeline"]))


if __name__ == "__main__":
    main()
