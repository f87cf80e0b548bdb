"""What a process and its descendants use, sampled by a thread: the benchmarks of work spread over processes."""

from __future__ import annotations

import threading

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
