"""The same storage contract against the local backend and S3 (moto's server over HTTP)."""

import os
import uuid

import boto3
import pytest

from ingest_assets.storage import LocalStorage, S3Storage, open_storage


@pytest.fixture(params=["local", "s3"])
def storage(request, tmp_path):
    if request.param == "local":
        return LocalStorage(tmp_path / "root")
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = f"ingest-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return S3Storage(bucket, "hub/prefix", endpoint_url=endpoint)


def test_write_once_files(storage):
    storage.write_bytes("cdl/plan/a.json", b"1")
    with pytest.raises(FileExistsError):
        storage.write_bytes("cdl/plan/a.json", b"2")
    assert storage.read_bytes("cdl/plan/a.json") == b"1"
    storage.write_bytes("cdl/state/s.json", b"3", overwrite=True)
    storage.write_bytes("cdl/state/s.json", b"4", overwrite=True)
    assert storage.read_bytes("cdl/state/s.json") == b"4"
    assert storage.list_children("cdl") == ["plan", "state"]
    assert list(storage.list_keys("cdl")) == ["cdl/plan/a.json", "cdl/state/s.json"]


def test_missing_files_and_write_once_uploads_behave_alike(storage, tmp_path):
    with pytest.raises(FileNotFoundError):
        storage.read_bytes("nowhere/at/all.json")
    local = tmp_path / "upload.bin"
    local.write_bytes(b"first")
    storage.write_file("p/file.bin", local)
    local.write_bytes(b"second")
    with pytest.raises(FileExistsError):
        storage.write_file("p/file.bin", local)
    assert storage.read_bytes("p/file.bin") == b"first"
    storage.write_file("p/file.bin", local, overwrite=True)
    assert storage.read_bytes("p/file.bin") == b"second"


def test_folder_appears_whole_with_manifest_last(storage):
    with storage.folder("p/harvest/20260101/x.avro") as folder:
        folder.write_bytes("part-00000.avro", b"a" * 10)
        folder.write_bytes("_LOGS/report.csv", b"r")
        folder.write_bytes("_MANIFEST", b"m")
        assert not storage.is_complete("p/harvest/20260101/x.avro")
    assert storage.is_complete("p/harvest/20260101/x.avro")
    assert list(storage.list_keys("p/harvest/20260101/x.avro")) == [
        "p/harvest/20260101/x.avro/_LOGS/report.csv",
        "p/harvest/20260101/x.avro/_MANIFEST",
        "p/harvest/20260101/x.avro/part-00000.avro",
    ]
    with pytest.raises(FileExistsError):
        with storage.folder("p/harvest/20260101/x.avro") as folder:
            folder.write_bytes("_MANIFEST", b"m")


def test_a_folder_adopts_a_file_of_its_storage_or_of_another(storage, tmp_path):
    """A staged file of the same storage becomes a folder's part (local storage renames it: its bytes are not
    copied); one of another storage is copied."""
    storage.write_bytes("_spark-staging/job/00000-00000-a.avro", b"p" * 1000)
    other = LocalStorage(tmp_path / "elsewhere")
    other.write_bytes("staged.avro", b"q" * 10)
    moved = storage.uri("_spark-staging/job/00000-00000-a.avro")
    before = os.stat(moved).st_ino if isinstance(storage, LocalStorage) else None
    with storage.folder("p/mapping/20260101/z.avro") as folder:
        folder.adopt("part-00000.avro", storage, "_spark-staging/job/00000-00000-a.avro")
        folder.adopt("part-00001.avro", other, "staged.avro")
        folder.write_bytes("_MANIFEST", b"m")
        assert folder.bytes_written == 1011
    assert storage.read_bytes("p/mapping/20260101/z.avro/part-00000.avro") == b"p" * 1000
    assert storage.read_bytes("p/mapping/20260101/z.avro/part-00001.avro") == b"q" * 10
    assert other.read_bytes("staged.avro") == b"q" * 10  # another storage's file is left to its owner
    if before is not None:  # the same file, renamed
        assert not storage.exists("_spark-staging/job/00000-00000-a.avro")
        assert os.stat(storage.uri("p/mapping/20260101/z.avro/part-00000.avro")).st_ino == before


def test_failure_mid_write_leaves_nothing_visible(storage):
    with pytest.raises(RuntimeError, match="disk on fire"):
        with storage.folder("p/mapping/20260101/y.avro") as folder:
            folder.write_bytes("part-00000.avro", b"a")
            raise RuntimeError("disk on fire")
    assert not storage.exists("p/mapping/20260101/y.avro")
    assert list(storage.list_keys("")) == []
    with storage.folder("p/mapping/20260101/y.avro") as folder:  # a re-run succeeds
        folder.write_bytes("_MANIFEST", b"m")
    assert storage.is_complete("p/mapping/20260101/y.avro")


def test_folder_without_marker_is_an_error(storage):
    with pytest.raises(RuntimeError, match="_MANIFEST"):
        with storage.folder("p/x.avro") as folder:
            folder.write_bytes("part-00000.avro", b"a")
    assert not storage.exists("p/x.avro")


def test_keys_cannot_escape_the_root(storage):
    for key in ("../etc/passwd", "/abs", "a//b", "a/./b"):
        with pytest.raises(ValueError):
            storage.write_bytes(key, b"x")


def test_open_storage_selects_backend(tmp_path):
    assert isinstance(open_storage(str(tmp_path)), LocalStorage)
    assert isinstance(open_storage(f"file://{tmp_path}"), LocalStorage)
    s3 = open_storage("s3://bucket/some/prefix")
    assert isinstance(s3, S3Storage) and s3.uri("a/b") == "s3://bucket/some/prefix/a/b"
    with pytest.raises(ValueError):
        open_storage("ftp://host/dir")


def test_staging_left_by_a_killed_write_is_removed_at_the_next_run(tmp_path):
    """A SIGKILLed folder write leaves ``.staging/<id>`` behind; a run's storage setup removes staging no writer
    touched for a day and leaves a live writer's folder alone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import dagster as dg

    from ingest_assets.defs.resources import StorageResource

    root = tmp_path / "s"
    killed = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom ingest_assets.storage import LocalStorage\n"
        f"with LocalStorage({str(root)!r}).folder('demo/harvest/20260115/x.avro') as f:\n"
        "    f.open('part-00000.avro').write(b'x' * 1000); print('writing', flush=True); time.sleep(60)\n"
    )], stdout=subprocess.PIPE, text=True)
    assert killed.stdout.readline().strip() == "writing"
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    [left] = (root / ".staging").iterdir()
    day_old = time.time() - 25 * 3600
    for path in [left, *left.rglob("*")]:
        os.utime(path, (day_old, day_old))
    live = LocalStorage(root)
    with live.folder("demo/harvest/20260116/y.avro") as writer:  # a write in progress during the next run's start
        writer.open("part-00000.avro").write(b"y")

        @dg.asset
        def uses_storage(storage: StorageResource) -> None:
            pass

        assert dg.materialize([uses_storage], resources={"storage": StorageResource(url=str(root))}).success
        remaining = list((root / ".staging").iterdir())
        assert left not in remaining and len(remaining) == 1  # only the live writer's folder
        writer.write_bytes("_MANIFEST", b"{}")
    assert live.is_complete("demo/harvest/20260116/y.avro") and not live.exists("demo/harvest/20260115/x.avro")


def test_a_full_disk_is_an_error_naming_provider_activity_and_path(tmp_path, monkeypatch):
    """The kernel's ENOSPC (writes to /dev/full) comes out as a retryable IngestError, and nothing is published."""
    from datetime import date, datetime, timezone

    from ingest_assets.core.errors import IngestError
    from ingest_assets.storage import backends
    from ingest_assets.storage.activities import RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    monkeypatch.setattr(backends._LocalFolderWriter, "open", lambda self, name: open("/dev/full", "wb"))
    storage = LocalStorage(tmp_path / "s")
    started = datetime(2026, 1, 15, 8, tzinfo=timezone.utc)
    records = [{"id": f"r{n}", "ingestDate": 0, "provider": "demo", "document": "x" * 70_000, "mimetype": "application_xml",
                "deleted": False} for n in range(5)]
    with pytest.raises(IngestError) as caught:
        write_activity(storage, RecordStream(records, started=started), provider="demo", activity="harvest",
                       day=date(2026, 1, 15), started=started, schema=ORIGINAL_RECORD, partition="x")
    message = str(caught.value)
    assert "storage full while writing the harvest output" in message and "demo/harvest/20260115/" in message
    assert caught.value.provider == "demo" and caught.value.retryable
    assert list(storage.list_keys("demo")) == []


def test_a_full_disk_after_the_folder_appeared_takes_the_output_back(tmp_path, monkeypatch):
    """ENOSPC on the prov file (the folder already renamed into place; a real tmpfs cannot aim the fault at that one
    write) removes the folder again: the output is whole (folder, prov, plan entry) or absent."""
    import errno
    from datetime import date, datetime, timezone

    from ingest_assets.core.errors import StorageLimitError
    from ingest_assets.storage.activities import PlanRef, RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD

    storage = LocalStorage(tmp_path / "s")
    real_write = LocalStorage.write_bytes

    def full_for_prov(self, key, data, overwrite=False):
        if key.endswith("-prov.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, key, data, overwrite)

    monkeypatch.setattr(LocalStorage, "write_bytes", full_for_prov)
    started = datetime(2026, 1, 15, 8, tzinfo=timezone.utc)
    records = [{"id": "r1", "ingestDate": 0, "provider": "demo", "document": "x", "mimetype": "application_xml", "deleted": False}]
    with pytest.raises(StorageLimitError) as caught:
        write_activity(storage, RecordStream(records, started=started), provider="demo", activity="harvest",
                       day=date(2026, 1, 15), started=started, schema=ORIGINAL_RECORD, partition="x", plan=PlanRef(started))
    assert caught.value.retryable and caught.value.provider == "demo"
    assert list(storage.list_keys("demo")) == []
