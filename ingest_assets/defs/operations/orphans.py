"""``orphaned_runs_sensor``: under Dagster's default run launcher a run whose worker process died (the daemon or the
code server killed, OOM, a host restart) stays STARTED for ever, and holds its provider's one concurrency slot, so the
provider's queued days never start. The sensor marks such a run failed, naming the dead worker; the instance's
``run_retries`` (dagster.yaml) then re-execute it from the step that did not finish (outputs already written stay:
each day's output appears once). Other launchers have Dagster's own run-worker health checks."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

STARTED_PROCESS = "Started process for run (pid: "  # the run worker's first engine event (its metadata holds the pid)
MAX_RUNS = 200  # STARTED runs looked at per evaluation (bounded; more than the instance's run limit ever lets start)


def worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid of the process executing the run, from its engine event (None for runs executed in process)."""
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        if entry.message.startswith(STARTED_PROCESS):
            pid = entry.dagster_event.engine_event_data.metadata.get("pid")
            return int(pid.value) if pid is not None else None
    return None


def is_alive(pid: int) -> bool:
    """Whether ``pid`` is a live Dagster process on this host (a reused pid of another program is not)."""
    try:
        return b"dagster" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: the pid exists or not
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


@dg.sensor(name="orphaned_runs_sensor", minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def orphaned_runs_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    instance = context.instance
    if not isinstance(instance.run_launcher, dg.DefaultRunLauncher):
        return dg.SkipReason("the run launcher checks its run workers itself")
    failed = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]), limit=MAX_RUNS):
        run = record.dagster_run
        pid = worker_pid(instance, run.run_id)
        if pid is None or is_alive(pid):
            continue
        instance.report_run_failed(run, f"the run's worker process (pid {pid}) is gone: it died without ending the run "
                                        "(the daemon or code server killed, out of memory, a restart)")
        failed.append(run.run_id)
    return dg.SkipReason(f"marked {len(failed)} orphaned run(s) failed: {', '.join(failed)}" if failed else "no orphaned run")
