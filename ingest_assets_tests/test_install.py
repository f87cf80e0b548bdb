"""README command 1's install part, ``install.py``: the pinned uv wheel fetched from PyPI and checked against its
pinned sha256, then ``uv sync --locked`` on the interpreter that ran it, with what the commands need and not the
test tools. Run in a temporary copy of the checkout with a HOME of its own (uv goes to its ``~/.local/bin``) and
this machine's uv cache (nothing is downloaded twice but the 17 MB wheel)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = Path("/usr/bin/python3")  # Debian's own: PEP 668 refuses pip installs, and it may have no pip
TEST_TOOLS = ("pytest", "playwright", "moto", "hypothesis", "ruff", "dagster_dg_cli", "pyspark")


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The checkout's files (tracked and new, as git lists them) in a folder of their own."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    copy = tmp_path / "checkout"
    for name in filter(None, listed):
        if (PROJECT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT / name, copy / name)
    (tmp_path / "home").mkdir()
    return copy


def _install(python: Path | str, checkout: Path) -> subprocess.CompletedProcess:
    uv = shutil.which("uv")
    assert uv, "uv is how the project is installed; the tests run under it"
    cache = subprocess.run([uv, "cache", "dir"], check=True, capture_output=True, text=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV", "XDG_BIN_HOME"))}
    env.update(HOME=str(checkout.parent / "home"), UV_CACHE_DIR=cache, PATH="/usr/bin:/bin")
    return subprocess.run([str(python), "install.py"], cwd=checkout, env=env, capture_output=True, text=True, timeout=600)


def test_install_on_the_system_python_brings_uv_and_only_what_the_commands_need(checkout):
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no system interpreter at /usr/bin/python3")
    done = _install(SYSTEM_PYTHON, checkout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    uv = checkout.parent / "home" / ".local" / "bin" / "uv"
    version = subprocess.run([str(uv), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.split()[:2] == ["uv", "0.13.8"]
    # not on PATH, so the next command names it in full (and says how to put it on PATH)
    assert f"next: {uv} run ingest-assets demo" in done.stdout and "is not on PATH" in done.stdout
    venv = checkout / ".venv"
    config = dict(line.split(" = ", 1) for line in (venv / "pyvenv.cfg").read_text().splitlines() if " = " in line)
    system_version = subprocess.run([str(SYSTEM_PYTHON), "-c", "import platform; print(platform.python_version())"],
                                    capture_output=True, text=True, check=True).stdout.strip()
    assert (config["home"], config["version_info"]) == (str(SYSTEM_PYTHON.parent), system_version)
    [site] = venv.glob("lib/python3.*/site-packages")
    installed = {p.name.split("-")[0].lower() for p in site.glob("*.dist-info")}
    assert {"dagster", "dagster_webserver", "ingest_assets", "lxml", "fastavro"} <= installed
    assert not installed & set(TEST_TOOLS), "test tools and the spark extra come with .ci/run, not README command 1"
    commands = subprocess.run([str(venv / "bin" / "ingest-assets"), "--help"], capture_output=True, text=True, timeout=120)
    assert commands.returncode == 0 and "demo" in commands.stdout


def test_a_wheel_whose_sha256_is_not_the_pinned_one_is_refused_and_nothing_installed(checkout):
    """On the interpreter running the tests (a pyenv Python here): the real wheel, against a wrong pin."""
    script = checkout / "install.py"
    script.write_text(re.sub(r'"[0-9a-f]{64}"', '"' + "0" * 64 + '"', script.read_text()))
    done = _install(sys.executable, checkout)
    assert done.returncode == 1
    assert re.fullmatch(r"install\.py: error: https://files\.pythonhosted\.org/\S+\.whl has sha256 [0-9a-f]{64}, "
                        r"not the pinned 0{64}: refused, nothing installed\n", done.stderr), done.stderr
    bin_dir = checkout.parent / "home" / ".local" / "bin"
    assert list(bin_dir.iterdir()) == [] and not (checkout / ".venv").exists()
