"""The suite's time budget, as every run measures it (the root conftest registers :class:`Budget` with its groups):
the end of the run says each group's total (a test in two groups counts in both), each xdist worker's total (the run
lasts as long as its busiest worker: the critical path) and the CPU seconds of each worker and of the whole run, with
the processes each waited for (a server another process stops is not counted); with ``BUDGET_SLOWEST=30``, also the
30 slowest tests, setup, call and teardown together (``--durations`` lists the phases apart)."""

from __future__ import annotations

import os
import resource
from collections import defaultdict
from collections.abc import Iterable


class Budget:
    def __init__(self, groups: Iterable[str]):
        self.groups = tuple(groups)
        self.tests = defaultdict(lambda: [0.0, "-", ()])  # node id -> [seconds, worker, groups]
        self.cpu: dict[str, float] = {}  # worker -> CPU seconds

    def pytest_runtest_logreport(self, report) -> None:
        """Each phase of each test, where it is reported (the controller, under xdist)."""
        test = self.tests[report.nodeid.split("@")[0]]  # without xdist's group suffix
        test[0] += report.duration
        node = getattr(report, "node", None)
        test[1] = node.gateway.id if node is not None else "-"
        test[2] = tuple(name for name in self.groups if name in report.keywords)

    def pytest_sessionfinish(self, session) -> None:
        if hasattr(session.config, "workeroutput"):  # an xdist worker: its CPU seconds go to the controller
            session.config.workeroutput["budget_cpu"] = cpu_seconds()

    def pytest_testnodedown(self, node, error) -> None:
        self.cpu[node.gateway.id] = getattr(node, "workeroutput", {}).get("budget_cpu", 0.0)

    def pytest_terminal_summary(self, terminalreporter, config) -> None:
        if hasattr(config, "workerinput"):
            return
        write = terminalreporter.write_line
        terminalreporter.section("time budget")
        write(f"{len(self.tests)} tests, {sum(t[0] for t in self.tests.values()):.0f} s of test time")
        for nodeid, (seconds, worker, groups) in sorted(self.tests.items(), key=lambda item: -item[1][0])[
                :int(os.environ.get("BUDGET_SLOWEST", "0"))]:
            write(f"{seconds:8.1f} s  {worker:3s} {nodeid}  {' '.join(groups)}")
        per_group, per_worker = defaultdict(lambda: [0.0, 0]), defaultdict(float)
        for seconds, worker, groups in self.tests.values():
            per_worker[worker] += seconds
            for group in groups or ("(none)",):
                per_group[group][0] += seconds
                per_group[group][1] += 1
        write("per group: " + ", ".join(f"{group} {seconds:.0f} s ({count} tests)" for group, (seconds, count) in
                                        sorted(per_group.items(), key=lambda item: -item[1][0])))
        write("per worker: " + ", ".join(f"{worker} {seconds:.0f} s" for worker, seconds in sorted(per_worker.items())))
        workers = ", ".join(f"{worker} {seconds:.0f}" for worker, seconds in sorted(self.cpu.items()))
        write(f"CPU seconds: {workers + ' (each with the processes it waited for); ' if workers else ''}"
              f"the whole run {cpu_seconds():.0f}")


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of the children it waited for."""
    return sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))
