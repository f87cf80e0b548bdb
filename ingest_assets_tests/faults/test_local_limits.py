"""A full disk (a real tmpfs: ENOSPC) and the file-size limit (RLIMIT_FSIZE: EFBIG) under a record activity write in a
worker process: a typed StorageLimitError naming provider and output, saying whether a retry can help, and nothing
of the output visible afterwards (no folder, no prov file, no plan entry), while an earlier output stays whole."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from ingest_assets.storage import LocalStorage, layout

WRITER = """
import json, sys
from datetime import date, datetime, timezone
from ingest_assets.core.errors import IngestError
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.activities import PlanRef, RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD

root, count, hour = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
started = datetime(2026, 1, 15, hour, tzinfo=timezone.utc)
# incompressible documents (a counter hashed), so the output's size is the records' size whatever the codec
import hashlib
records = ({"id": f"r{n}", "ingestDate": 0, "provider": "demo", "mimetype": "application_xml", "deleted": False,
            "document": "".join(hashlib.sha256(f"{n}/{k}".encode()).hexdigest() for k in range(64))} for n in range(count))
try:
    result = write_activity(LocalStorage(root), RecordStream(records, started=started), provider="demo", activity="harvest",
                            day=date(2026, 1, 15), started=started, schema=ORIGINAL_RECORD, partition="2026-01-15|demo",
                            plan=PlanRef(started))
except IngestError as exc:
    print(json.dumps({"type": type(exc).__name__, "message": str(exc), "provider": exc.provider, "file": exc.file,
                      "retryable": exc.retryable}))
    sys.exit(1)
print(json.dumps({"records": result.records}))
"""


def _write(root, count: int, hour: int, fsize: int | None = None) -> tuple[int, dict]:
    def limit() -> None:
        if fsize:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    done = subprocess.run([sys.executable, "-c", WRITER, str(root), str(count), str(hour)], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)
    assert done.stdout.strip(), done.stderr[-3000:]  # a typed error, never a bare OSError traceback
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def _visible(storage: LocalStorage) -> list[str]:
    return sorted(storage.list_keys("demo"))


def test_a_full_disk_is_a_retryable_typed_error_and_leaves_nothing_visible(tmpfs):
    root = tmpfs(2 * 1024 * 1024)
    storage = LocalStorage(root)
    assert _write(root, 50, 8) == (0, {"records": 50})  # ~200 KB: fits
    before = _visible(storage)

    status, error = _write(root, 2000, 9)  # ~8 MB of incompressible records on a 2 MiB filesystem
    assert status == 1 and error["type"] == "StorageLimitError" and error["retryable"] is True
    assert error["provider"] == "demo" and error["file"].startswith("demo/harvest/20260115/20260115_090000-demo-")
    assert "storage full while writing the harvest output" in error["message"] and "No space left on device" in error["message"]
    assert _visible(storage) == before  # the earlier output, prov and plan as they were; nothing of the failed one
    assert list((root / ".staging").iterdir()) == []
    [kept] = layout.complete_outputs(storage, "demo", "harvest")
    assert kept.started.hour == 8


def test_the_file_size_limit_is_a_final_typed_error_and_leaves_nothing_visible(tmp_path):
    storage = LocalStorage(tmp_path)
    assert _write(tmp_path, 50, 8) == (0, {"records": 50})
    before = _visible(storage)

    status, error = _write(tmp_path, 2000, 9, fsize=1024 * 1024)  # a part file of ~8 MB under a 1 MiB RLIMIT_FSIZE
    assert status == 1 and error["type"] == "StorageLimitError" and error["retryable"] is False
    assert error["provider"] == "demo" and error["file"].startswith("demo/harvest/20260115/20260115_090000-demo-")
    assert "file-size limit reached while writing the harvest output" in error["message"] and "File too large" in error["message"]
    assert _visible(storage) == before
    assert list((tmp_path / ".staging").iterdir()) == []
