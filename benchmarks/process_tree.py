"""What a process and its descendants use, sampled by a thread: the benchmarks of work spread over processes."""

from __future__ import annotations

import threading
import time

import psutil


class TreeMemory:
    """Samples the summed RSS of a process and its descendants every ``interval`` seconds until stopped; keeps the
    peaks, and the CPU seconds (user + system) each process had used when last seen (a process that ends is counted
    up to its last sample)."""

    def __init__(self, pid: int, interval: float = 0.5):
        self.root, self.peak_total, self.peak_one = psutil.Process(pid), 0, 0
        self.cpu: dict[tuple[int, float], float] = {}
        self.interval = interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stopped.wait(self.interval):
            sizes = []
            for process in [self.root, *self.root.children(recursive=True)]:
                try:
                    sizes.append(process.memory_info().rss)
                    times = process.cpu_times()
                    self.cpu[(process.pid, process.create_time())] = times.user + times.system
                except psutil.Error:
                    pass
            self.peak_total, self.peak_one = max(self.peak_total, sum(sizes)), max(self.peak_one, max(sizes, default=0))

    def descendants_cpu(self) -> float:
        """CPU seconds of the processes other than the root, as last seen."""
        return sum(cpu for (pid, _created), cpu in self.cpu.items() if pid != self.root.pid)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


class TreeCpu(threading.Thread):
    """CPU seconds of every process below this one, per kind of process (``kinds``: (kind, a string of its command
    line), first match; others are not counted), sampled every 0.2 s (a process that ended counts with its last
    sample), as a time series: what a run's CPU went to, whatever else the machine ran."""

    def __init__(self, kinds: tuple[tuple[str, str], ...]):
        super().__init__(daemon=True)
        self.kinds, self.running, self.latest, self.series = kinds, True, {}, []

    def run(self):
        me = psutil.Process()
        while self.running:
            try:
                children = me.children(recursive=True)
            except psutil.Error:  # a process ended while the tree was read: the next sample reads it again
                children = []
            for child in children:
                try:
                    key = (child.pid, child.create_time())
                    if key not in self.latest:
                        line = " ".join(child.cmdline())
                        kind = next((k for k, marker in self.kinds if marker in line), None)
                        self.latest[key] = [kind, 0.0]
                    times = child.cpu_times()
                    self.latest[key][1] = times.user + times.system
                except psutil.Error:
                    pass
            totals: dict[str, float] = {}
            for kind, cpu in self.latest.values():
                if kind:
                    totals[kind] = totals.get(kind, 0.0) + cpu
            self.series.append((time.time(), totals))
            time.sleep(0.2)

    def between(self, start: float, end: float) -> dict[str, float]:
        """CPU seconds per kind of process from ``start`` to ``end`` (epoch seconds, the nearest samples)."""
        def at(moment: float) -> dict[str, float]:
            before = [totals for t, totals in self.series if t <= moment]
            return before[-1] if before else {}

        first, last = at(start), at(end)
        return {kind: round(last[kind] - first.get(kind, 0.0), 1) for kind in last}
