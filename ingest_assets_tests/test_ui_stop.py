"""How ``ingest-assets ui`` stops what it started (``cli/ui.py``: ``supervise``), on SIGINT, SIGTERM and SIGHUP,
also started as a script's background job (SIGINT ignored), with a kill for what does not stop. The process it
supervises here is a small Python process in its own session with children of its own, as ``dagster dev`` with
its code server (and a run's worker) is (the real UI stops in test_walkthrough.py and test_ui.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ingest_assets_tests.support import alive, stop_pid, wait_for

# dagster dev's stand-in: writes its pid and its children's to $TREE, then sleeps; SIGINT (when its disposition is
# the default) ends it after a graceful half second, leaving its children behind. Its code server ignores SIGINT (it
# gets none from dagster dev) and serves on the socket file its command line names; with $RUN a run is in flight:
# a worker spawned by multiprocessing, as Dagster's code servers start them
DEV = """
import json, multiprocessing, os, signal, subprocess, sys, time
if os.environ.get("STUCK"):  # a dagster dev that does not stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", os.environ["CODE_SERVER"], "--socket", os.environ["TREE"] + ".sock"])
tree = {"dev": os.getpid(), "child": child.pid}
if os.environ.get("RUN"):
    worker = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(300,))
    worker.start()
    tree["worker"] = worker.pid
while not os.path.exists(os.environ["TREE"] + ".sock"):
    time.sleep(0.05)
with open(os.environ["TREE"] + ".tmp", "w") as out:
    json.dump(tree, out)
os.replace(os.environ["TREE"] + ".tmp", os.environ["TREE"])
try:
    time.sleep(300)
except KeyboardInterrupt:  # a graceful stop takes a moment: a kill now (an early escalation) would cut it short
    time.sleep(0.5)
    open(os.environ["TREE"] + ".stopped", "w").close()
"""
CODE_SERVER = """
import signal, socket, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[sys.argv.index("--socket") + 1])
server.listen()
time.sleep(300)
"""
SUPERVISOR = """
import os, sys
from ingest_assets.cli import ui
ui.STOP_SECONDS = float(os.environ["STOP_SECONDS"])
sys.exit(ui.supervise([sys.executable, "-c", sys.argv[1]], dict(os.environ)))
"""


def _start(tmp_path, ignored=(), stuck=False, **env):
    """The supervisor in its own session (``ignored``: signals ignored as it starts; ``env``: more variables), once
    its tree is up."""
    tree = tmp_path / "tree.json"
    env = {**os.environ, "TREE": str(tree), "CODE_SERVER": CODE_SERVER, "STOP_SECONDS": "1" if stuck else "30",
           **({"STUCK": "1"} if stuck else {}), **env}
    def ignore():  # the signals' dispositions as the test says, not as the test runner's (nohup ignores SIGHUP)
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN if number in ignored else signal.SIG_DFL)
    with open(tmp_path / "output.log", "wb") as log:  # a file: the tree's leftovers may hold it open
        process = subprocess.Popen([sys.executable, "-c", SUPERVISOR, DEV], env=env, start_new_session=True,
                                   preexec_fn=ignore, stdout=log, stderr=subprocess.STDOUT)
    wait_for("the supervised tree to start", tree.exists, timeout=60)
    return process, json.loads(tree.read_text())


@pytest.fixture
def reap():
    """Whatever a test started is gone at its end, whether the code under test stopped it or not."""
    started = []
    yield started.append
    for process, pids in started:
        for pid in (process.pid, pids["dev"]):
            stop_pid(pid, timeout=1, sig=signal.SIGKILL)
        for pid in (pids["child"], pids.get("worker")):
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
        process.wait(30)


@pytest.mark.parametrize("sig, ignored", [
    (signal.SIGTERM, ()), (signal.SIGHUP, ()),
    (signal.SIGINT, (signal.SIGINT,)),  # a script's `ingest-assets ui &`: the shell ignored SIGINT (Ctrl-C's case too)
], ids=["SIGTERM", "SIGHUP", "SIGINT-in-background"])
def test_a_stop_signal_stops_dagster_dev_and_what_outlives_it(tmp_path, reap, sig, ignored):
    process, pids = _start(tmp_path, ignored)
    reap((process, pids))
    os.killpg(process.pid, sig)  # as `kill -- -PGID`: dagster dev's session is out of its reach
    os.killpg(process.pid, sig)  # and again, as `uv run` forwards a copy of what its group got
    assert process.wait(60) == 0, (tmp_path / "output.log").read_text()[-2000:]
    # dagster dev had SIGINT back, got it, and had the time to stop (the copy did not escalate)
    assert (tmp_path / "tree.json.stopped").exists()
    assert not alive(pids["dev"]) and not alive(pids["child"])  # the code server left behind got SIGKILL
    assert not (tmp_path / "tree.json.sock").exists()  # and its socket file went with it
    assert "Traceback" not in (tmp_path / "output.log").read_text()


def test_a_dagster_dev_that_does_not_stop_is_killed_with_its_group(tmp_path, reap):
    process, pids = _start(tmp_path, stuck=True)
    reap((process, pids))
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(60) == 0, (tmp_path / "output.log").read_text()[-2000:]
    assert not alive(pids["dev"]) and not alive(pids["child"])  # SIGINT, SIGTERM ignored: SIGKILL


def test_under_nohup_a_hangup_is_ignored_and_sigterm_still_stops(tmp_path, reap):
    process, pids = _start(tmp_path, ignored=(signal.SIGHUP,))
    reap((process, pids))
    os.killpg(process.pid, signal.SIGHUP)
    time.sleep(1)  # what a hangup would have stopped by now: the supervisor alone handles it, at once
    assert process.poll() is None and alive(pids["dev"])
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(60) == 0
    assert not alive(pids["dev"]) and not alive(pids["child"])


def test_a_run_in_flight_is_stopped_and_marked_failed_not_left_started(tmp_path, reap):
    import dagster as dg
    from dagster._core.events import EngineEventData

    home = tmp_path / "dagster"
    home.mkdir()
    process, pids = _start(tmp_path, RUN="1", DAGSTER_HOME=str(home))
    reap((process, pids))
    worker = pids["worker"]
    with dg.DagsterInstance.from_config(str(home)) as instance:  # the run's worker said so, as Dagster's does
        run = instance.add_run(dg.DagsterRun(job_name="record_pipeline", status=dg.DagsterRunStatus.STARTED))
        instance.report_engine_event(f"Started process for run (pid: {worker}).", run, EngineEventData.in_process(worker))
    os.killpg(process.pid, signal.SIGTERM)
    output = (tmp_path / "output.log").read_text
    assert process.wait(120) == 0, output()[-2000:]
    assert not alive(worker) and not alive(pids["child"])
    with dg.DagsterInstance.from_config(str(home)) as instance:
        stopped = instance.get_run_by_id(run.run_id)
        failure = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert stopped.status == dg.DagsterRunStatus.FAILURE, output()[-2000:]
    assert f"worker process (pid {worker}) is gone" in failure[0].message
    assert f"stopped 1 run(s) in flight, marked failed (run again from the step that did not finish): {run.run_id}" in output()
