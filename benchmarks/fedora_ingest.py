"""Fedora ingest vs its raw limit, same objects, same server, same run: the repository backend
(``FedoraRepository``: ``transaction()``, ``tx.put`` per object, commit) against a plain keep-alive ``requests``
loop (open ``fcr:tx``, one PUT of the same Turtle per object with ``Atomic-ID``, commit), both in transactions of
100 objects, each into its own container.

The server is Fedora 6.1 started from Maven Central (as the tests start it) unless ``--url`` (with ``--user`` and
``--password``) names one. Memory: peak RSS after a quarter of the objects and after all of them.

    uv run --locked python benchmarks/fedora_ingest.py [--objects 2000]
"""

from __future__ import annotations

import argparse
import resource
import time
import uuid

import requests

from ingest_assets.core.http import HttpClient
from ingest_assets.repository.fedora import BASIC_CONTAINER, LENIENT, FedoraRepository
from ingest_assets.repository.model import RepositoryObject
from ingest_assets_tests.support.servers.fedora import start_fedora

BATCH = 100


def objects(count: int):
    for n in range(count):
        yield RepositoryObject(
            f"K2N:id_{n:032x}", "member", dc={"title": [f"Pollen image {n}"], "type": ["StillImage"],
                                              "language": ["en"], "description": ["A pollen grain, light microscopy"]},
            k2n={"Best_Quality_URI": [f"http://img.example.org/{n}.jpg"], "Country_Codes": ["DE", "NL"]},
            collection="K2N:www.keytonature.eu_wiki_bench", harvesting_url=f"http://www.keytonature.eu/wiki/Image_{n}")


def project(url: str, auth: tuple[str, str], count: int) -> float:
    http = HttpClient(allow_private=True)
    http.session.auth = auth
    repo = FedoraRepository(f"{url}/bench-{uuid.uuid4().hex[:8]}", http)
    repo.transaction_endpoint()  # finds the root and creates the container: not part of the loop
    start = time.perf_counter()
    batch = []
    for obj in objects(count):
        batch.append(obj)
        if len(batch) == BATCH:
            with repo.transaction() as tx:
                for one in batch:
                    tx.put(one)
            batch = []
    if batch:
        with repo.transaction() as tx:
            for one in batch:
                tx.put(one)
    return time.perf_counter() - start


def raw(url: str, auth: tuple[str, str], count: int) -> float:
    session = requests.Session()
    session.auth = auth
    base = f"{url}/raw-{uuid.uuid4().hex[:8]}"
    session.put(base, headers={"Link": BASIC_CONTAINER}).raise_for_status()
    start = time.perf_counter()
    tx = None
    for n, obj in enumerate(objects(count)):
        if n % BATCH == 0:
            if tx:
                session.put(tx).raise_for_status()
            tx = session.post(f"{url}/fcr:tx").headers["Location"]
        target = f"{base}/{obj.pid.replace(':', '%3A')}"
        session.put(target, data=obj.to_turtle(subject=target), headers={
            "Content-Type": "text/turtle", "Atomic-ID": tx, "Prefer": LENIENT, "Link": BASIC_CONTAINER}).raise_for_status()
    session.put(tx).raise_for_status()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--url")
    parser.add_argument("--user", default="fedoraAdmin")
    parser.add_argument("--password")
    args = parser.parse_args()
    server = None if args.url else start_fedora()
    url = args.url or server.url
    auth = (args.user, args.password or (server.facts["password"] if server else ""))
    try:
        project(url, auth, max(1, args.objects // 4))
        quarter = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        raw_s = raw(url, auth, args.objects)
        ours_s = project(url, auth, args.objects)
        print(f"Fedora 6.1: {args.objects:,} new objects in transactions of {BATCH}")
        print(f"  raw keep-alive PUT loop: {raw_s:.1f} s = {args.objects / raw_s:,.0f} objects/s")
        print(f"  FedoraRepository (HEAD + PUT per object): {ours_s:.1f} s = {args.objects / ours_s:,.0f} objects/s"
              f"  -> ratio {raw_s / ours_s:.2f} of raw")
        print(f"  peak RSS: {quarter:,.0f} MB after {args.objects // 4:,} objects, "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB after {args.objects:,}")
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    main()
