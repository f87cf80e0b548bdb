"""``orphaned_runs_sensor``: under Dagster's default run launcher a run whose worker process died (the daemon or the
code server killed, OOM, a host restart) stays STARTED for ever, and holds its provider's one concurrency slot, so the
provider's queued days never start. The sensor marks such a run failed, naming the dead worker; the instance's
``run_retries`` (dagster.yaml) then re-execute it from the step that did not finish (outputs already written stay:
each day's output appears once), unless the run belongs to a backfill that has already ended (Dagster retries none of
its runs; ``dagster job backfill`` ends its backfill once it has queued the runs, an asset backfill stays in progress
until they and their retries end). A run left STARTING has no worker to look at: the instance's ``run_monitoring``
fails it after its start timeout. Other launchers have Dagster's own run-worker health checks."""

from __future__ import annotations

import dagster as dg
import psutil

STARTED_PROCESS = "Started process for run (pid: "  # the run worker's first engine event (its metadata holds the pid)
MAX_RUNS = 200  # STARTED runs looked at per evaluation (bounded; more than the instance's run limit ever lets start)


def run_worker(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """The pid of the process executing the run and when it said so, from its engine event (None before it started)."""
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        if entry.message.startswith(STARTED_PROCESS):
            pid = entry.dagster_event.engine_event_data.metadata.get("pid")
            return (int(pid.value), entry.timestamp) if pid is not None else None
    return None


def is_alive(pid: int, reported_at: float) -> bool:
    """Whether ``pid`` is still the run worker that reported itself at ``reported_at``: a live process, not a zombie,
    started before that report (a pid reused by a later process is not the worker). The worker may be a plain
    ``multiprocessing`` child of the code server, so its command line says nothing."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= reported_at + 1
    except psutil.NoSuchProcess:
        return False


def fail_orphaned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed each STARTED run whose worker process is gone (at most MAX_RUNS); their ids. The sensor's check,
    and ``ingest-assets ui``'s once it has stopped the workers of runs in flight."""
    failed = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]), limit=MAX_RUNS):
        run = record.dagster_run
        worker = run_worker(instance, run.run_id)
        if worker is None or is_alive(*worker):
            continue
        pid = worker[0]
        instance.report_run_failed(run, f"the run's worker process (pid {pid}) is gone: it died without ending the run "
                                        "(the daemon or code server killed, out of memory, a restart)")
        failed.append(run.run_id)
    return failed


@dg.sensor(name="orphaned_runs_sensor", minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def orphaned_runs_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    instance = context.instance
    if not isinstance(instance.run_launcher, dg.DefaultRunLauncher):
        return dg.SkipReason("the run launcher checks its run workers itself")
    failed = fail_orphaned_runs(instance)
    return dg.SkipReason(f"marked {len(failed)} orphaned run(s) failed: {', '.join(failed)}" if failed else "no orphaned run")
