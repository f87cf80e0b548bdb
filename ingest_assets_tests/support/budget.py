"""The suite's time budget, as every run measures it (the root conftest registers :class:`Budget` with its groups):
the end of the run says each group's total and each xdist worker's (the run lasts as long as its busiest worker: the
critical path), in seconds and in CPU seconds (a test's own process and the processes it waited for, so a figure a
loaded machine does not inflate; a server started by one test and stopped by another counts in neither), and the
CPU seconds of the whole run; with ``BUDGET_SLOWEST=30``, also the 30 slowest tests (setup, call and teardown
together; ``--durations`` lists the phases apart)."""

from __future__ import annotations

import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterable

import pytest

CPU = "cpu_seconds"  # the user property a test's teardown report carries to the controller


class Budget:
    def __init__(self, groups: Iterable[str]):
        self.groups = tuple(groups)
        self.tests = defaultdict(lambda: [0.0, 0.0, "-", ()])  # node id -> [seconds, CPU seconds, worker, groups]
        self.started = 0.0  # the CPU seconds when this process began the current test
        self.began = time.monotonic()

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self.started = cpu_seconds()

    @pytest.hookimpl(tryfirst=True)  # before xdist sends the report to the controller
    def pytest_runtest_logreport(self, report) -> None:
        """Each phase of each test: the teardown's report carries the CPU seconds of the whole test."""
        if report.when == "teardown" and not any(name == CPU for name, _ in report.user_properties):
            report.user_properties.append((CPU, cpu_seconds() - self.started))
        test = self.tests[report.nodeid.split("@")[0]]  # without xdist's group suffix
        test[0] += report.duration
        test[1] += sum(value for name, value in report.user_properties if name == CPU) if report.when == "teardown" else 0
        node = getattr(report, "node", None)  # the worker that ran it, in the controller
        test[2] = node.gateway.id if node is not None else "-"
        test[3] = tuple(name for name in self.groups if name in report.keywords)

    def pytest_terminal_summary(self, terminalreporter, config) -> None:
        if hasattr(config, "workerinput"):
            return
        write = terminalreporter.write_line
        terminalreporter.section("time budget")
        tests = self.tests.values()
        write(f"{len(self.tests)} tests: {sum(t[0] for t in tests):.0f} s, {sum(t[1] for t in tests):.0f} CPU-s of test "
              f"time; the whole run {time.monotonic() - self.began:.0f} s, {cpu_seconds():.0f} CPU-s")
        for nodeid, (seconds, cpu, worker, groups) in sorted(self.tests.items(), key=lambda item: -item[1][0])[
                :int(os.environ.get("BUDGET_SLOWEST", "0"))]:
            write(f"{seconds:7.1f} s {cpu:6.1f} CPU-s  {worker:3s} {nodeid}  {' '.join(groups)}")
        per_group, per_worker = defaultdict(lambda: [0.0, 0.0, 0]), defaultdict(lambda: [0.0, 0.0, 0])
        for seconds, cpu, worker, groups in tests:
            for total in (per_worker[worker], *(per_group[group] for group in groups or ("(none)",))):
                total[0] += seconds
                total[1] += cpu
                total[2] += 1
        for title, totals in (("per group", per_group), ("per worker", per_worker)):
            write(f"{title}: " + ", ".join(f"{name} {seconds:.0f} s {cpu:.0f} CPU-s ({count})" for name, (seconds, cpu, count)
                                           in sorted(totals.items(), key=lambda item: -item[1][0])))


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of the children it waited for."""
    return sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))
