"""A provider behind a degraded link: its server runs in a network namespace of its own, reached over a veth pair
whose addresses exist only there (a /30 of 169.254.0.0/16 of the link's own: .1 here, .2 in the namespace, so links
of parallel test processes never meet), with loss, a bandwidth cap, latency and
jitter, and a cut on demand (link down, its TCP connections killed).

This machine's kernel has no ``sch_netem`` (nor modules to load), so the impairments are built from what it has:
loss by nftables ``numgen random`` drops in the namespace (both directions), the bandwidth cap by a ``tbf`` qdisc on
the provider's side of the veth, and latency with jitter by a relay in the namespace that holds every chunk for
latency +- jitter (in order) before passing it on to the provider's server on the namespace's loopback.
"""

from __future__ import annotations

import ipaddress
import os
import random
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

import requests

from ingest_assets_tests.support import require, stop_group

PORT, SERVER_PORT = 8080, 8081  # in the namespace: the relay's, and the provider's server's on its loopback

RELAY = """
import asyncio, random, sys
latency, jitter = float(sys.argv[1]) / 1000, float(sys.argv[2]) / 1000

async def pipe(reader, writer):
    loop, last = asyncio.get_running_loop(), 0.0
    try:
        while data := await reader.read(65536):
            due = max(last, loop.time() + max(0.0, latency + random.uniform(-jitter, jitter)))  # jitter, never reordered
            last = due
            await asyncio.sleep(due - loop.time())
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()

async def serve(reader, writer):
    try:
        upstream = await asyncio.open_connection("127.0.0.1", %(server)d)
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, upstream[1]), pipe(upstream[0], writer))

async def main():
    server = await asyncio.start_server(serve, "%(address)s", %(port)d, backlog=256)
    await server.serve_forever()

asyncio.run(main())
"""


def _free_link() -> ipaddress.IPv4Network:
    """A /30 of 169.254.0.0/16 (link-local: never routed) that no address or route of this host touches."""
    shown = "".join(subprocess.run(command, capture_output=True, text=True).stdout
                    for command in (["ip", "-o", "-4", "addr"], ["ip", "-4", "route", "show", "table", "all"]))
    used = {ipaddress.ip_address(found) for found in re.findall(r"169\.254\.\d+\.\d+", shown)}
    while True:
        network = ipaddress.ip_network(f"169.254.{random.randrange(1, 255)}.{4 * random.randrange(64)}/30")
        if not any(address in network for address in used):
            return network


def _run(*args: str, namespace: str | None = None) -> None:
    command = ["ip", "netns", "exec", namespace, *args] if namespace else list(args)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")


@dataclass
class Impairment:
    latency_ms: float = 40
    jitter_ms: float = 15
    loss_percent: float = 1.0
    rate_kbit: int = 4000


class ProviderLink:
    """The namespace, the veth pair, the impairments and the provider's server (``server_code`` run with the
    namespace's loopback port and the provider's public URL as its arguments); :meth:`cut` takes the link down;
    :meth:`close` removes it all."""

    def __init__(self, server_code: str, impairment: Impairment):
        require(os.geteuid() == 0, "network namespaces need root (CI runs .ci/run as root)")
        require(all(shutil.which(tool) for tool in ("ip", "tc", "ss", "nft")),
                "ip, tc, ss (iproute2) and nft (nftables) are needed (.ci/run installs them)")
        self.impairment = impairment
        tag = uuid.uuid4().hex[:6]
        self.namespace, self.host_side, self.provider_side = f"ingf{tag}", f"ingf{tag}h", f"ingf{tag}p"
        self.processes: list[subprocess.Popen] = []
        self.link = _free_link()
        self.host_address, self.provider_address = (str(a) for a in self.link.hosts())
        self.url = f"http://{self.provider_address}:{PORT}"
        _run("ip", "netns", "add", self.namespace)
        try:
            self._wire(server_code)
        except BaseException:
            self.close()
            raise

    def _wire(self, server_code: str) -> None:
        ns, impairment = self.namespace, self.impairment
        # while the link is down its /30 is unreachable here, never routed on to the default gateway
        _run("ip", "route", "replace", "unreachable", str(self.link), "metric", "4096")
        _run("ip", "link", "add", self.host_side, "type", "veth", "peer", "name", self.provider_side)
        _run("ip", "link", "set", self.provider_side, "netns", ns)
        _run("ip", "addr", "add", f"{self.host_address}/30", "dev", self.host_side)
        _run("ip", "link", "set", self.host_side, "up")
        for args in (("ip", "addr", "add", f"{self.provider_address}/30", "dev", self.provider_side),
                     ("ip", "link", "set", self.provider_side, "up"), ("ip", "link", "set", "lo", "up"),
                     ("tc", "qdisc", "add", "dev", self.provider_side, "root", "tbf", "rate", f"{impairment.rate_kbit}kbit",
                      "burst", "32kbit", "latency", "400ms"),
                     ("nft", "add", "table", "inet", "impair")):
            _run(*args, namespace=ns)
        per_mille = round(impairment.loss_percent * 10)
        for hook in ("input", "output"):
            _run("nft", "add", "chain", "inet", "impair", hook, f"{{ type filter hook {hook} priority 0; }}", namespace=ns)
            _run("nft", "add", "rule", "inet", "impair", hook, "iifname" if hook == "input" else "oifname", self.provider_side,
                 "numgen", "random", "mod", "1000", "<", str(per_mille), "drop", namespace=ns)
        self._start([sys.executable, "-c", server_code, str(SERVER_PORT), self.url])
        relay = RELAY % {"server": SERVER_PORT, "address": self.provider_address, "port": PORT}
        self._start([sys.executable, "-c", relay, str(impairment.latency_ms), str(impairment.jitter_ms)])
        deadline = time.monotonic() + 60
        while not self._answers():
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.processes):
                raise RuntimeError("the provider in its namespace did not answer within 60 s")
            time.sleep(0.2)

    def _start(self, command: list[str]) -> None:
        self.processes.append(subprocess.Popen(["ip", "netns", "exec", self.namespace, *command], start_new_session=True,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def _answers(self) -> bool:
        try:
            return requests.get(self.url + "/", timeout=5).status_code < 500
        except requests.RequestException:
            return False

    def cut(self) -> None:
        """The link goes down and every TCP connection across it is killed (what a long outage or a middlebox that
        lost its state does): the next connect fails at once (the link's /30 is unreachable, never routed elsewhere),
        the open ones with ECONNABORTED."""
        _run("ip", "link", "set", self.host_side, "down")
        subprocess.run(["ss", "-K", "dst", self.provider_address], capture_output=True)

    def restore(self) -> None:
        _run("ip", "link", "set", self.host_side, "up")

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                stop_group(process, timeout=10)
        subprocess.run(["ip", "link", "del", self.host_side], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True)
        subprocess.run(["ip", "route", "del", "unreachable", str(self.link), "metric", "4096"], capture_output=True)
