"""Install uv and this project's environment: ``python3 install.py [--bin-dir DIR] [--no-sync]``.

The README's first command. Standard library only, so it runs on Debian's own ``python3`` (no pip, no venv
module, no root) as on a pyenv or any other Python 3.11+. It fetches the pinned uv wheel from PyPI, checks its
sha256 against the hash pinned here, puts its ``uv`` binary in DIR (default ``$XDG_BIN_HOME``, else
``~/.local/bin``, where uv's own installer puts it), then runs ``uv sync --locked`` on the interpreter running
this script: ``.venv`` beside this file, with what the commands and the demo need (the test tools come with
``bash .ci/run``). A uv of the pinned version already in DIR is kept."""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

UV_VERSION = "0.13.8"
_FILES = "https://files.pythonhosted.org/packages"
_AARCH64 = ("9e/f0/d989ac5fcebf83f1c8c5d78974f27788e8364945969eb646f5d0db35d924/"
            f"uv-{UV_VERSION}-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
            "0b3e8b1a4f5e405e31e2ff33de8af4744831e9f7338539671efbd8c3c94e791d")
# (system, machine, C library) -> the wheel's path on PyPI's file host and its sha256, as PyPI lists them
WHEELS = {
    ("Linux", "x86_64", "glibc"): (
        "c5/32/52ee34636aea1ab3f8baeeae1c3599461b8cddfb379862cc72ac61b8d91c/"
        f"uv-{UV_VERSION}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "e18a57b8b352eb7c8feb317b9f6f533c8f0ad9673fd6cf34bbe3cf1a9f6a8984"),
    ("Linux", "x86_64", "musl"): (
        f"4d/a3/1ac9cd75985371da0d29c9c12132e6d5b5627b9d0de87c5ad97ab9ad69b0/uv-{UV_VERSION}-py3-none-musllinux_1_1_x86_64.whl",
        "29451c60f5e8b07403e0a175d5229efc36b0289b34143ff4aaa499a5dd52553a"),
    ("Linux", "aarch64", "glibc"): _AARCH64,
    ("Linux", "aarch64", "musl"): _AARCH64,
    ("Darwin", "x86_64", ""): (
        f"be/7a/fd8a719c0198f8f8341847fc33b377f25ac79f7c4a56dbce5ceb086f239c/uv-{UV_VERSION}-py3-none-macosx_10_12_x86_64.whl",
        "b7124ca1956ec2e476a1003ea5715a15f0266afaec37f4dc9c6972ba8183e6d1"),
    ("Darwin", "arm64", ""): (
        f"84/46/deb3a1eb3020575e41d1f9840c07185761d8d4c25cd6f58e813afb017476/uv-{UV_VERSION}-py3-none-macosx_11_0_arm64.whl",
        "62b6943c7fd64fac6854f780bea6e0359e5a5bc3241f83ee357bb38276afac49"),
}
MAX_WHEEL_BYTES = 64 * 1024 * 1024  # the wheels are 14-20 MB
READ_TIMEOUT = 60  # seconds without a byte before the download is given up
PROJECT = Path(__file__).resolve().parent


class InstallError(Exception):
    """What stopped the install, said in one line."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="install.py", description=__doc__.split("\n\n")[1])
    parser.add_argument("--bin-dir", type=Path, default=default_bin_dir(), help="where uv goes (default: %(default)s)")
    parser.add_argument("--no-sync", action="store_true", help="install uv only")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        uv = install_uv(args.bin_dir.expanduser().resolve())
        if not args.no_sync:
            sync(uv)
    except InstallError as exc:
        print(f"install.py: error: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"install.py: error: {exc.cmd[0]} {exc.cmd[1]} ended with status {exc.returncode} (its messages are above)",
              file=sys.stderr)
        return exc.returncode
    print(f"ready in {time.monotonic() - started:.0f} s: uv {UV_VERSION} at {uv}")
    if not args.no_sync:
        print(f"next: {shown(uv)} run ingest-assets demo")
    if not on_path(uv.parent):
        print(f"({uv.parent} is not on PATH: add it, e.g. export PATH=\"{uv.parent}:$PATH\", "
              "or log in again where ~/.profile adds ~/.local/bin when it exists)")
    return 0


def default_bin_dir() -> Path:
    return Path(os.environ.get("XDG_BIN_HOME") or Path.home() / ".local" / "bin")


def install_uv(bin_dir: Path) -> Path:
    """``bin_dir/uv`` at the pinned version: kept when it already is, else from the pinned, verified wheel."""
    uv = bin_dir / "uv"
    if version_of(uv) == UV_VERSION:
        print(f"uv {UV_VERSION} already at {uv}")
        return uv
    key = (platform.system(), platform.machine(), platform.libc_ver()[0] or ("musl" if platform.system() == "Linux" else ""))
    if key not in WHEELS:
        raise InstallError(f"no uv wheel pinned for {'/'.join(filter(None, key))}; install uv {UV_VERSION} as "
                           "https://docs.astral.sh/uv/ says, then run `uv sync --locked` here")
    path, sha256 = WHEELS[key]
    bin_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=bin_dir, prefix=".uv-install-") as work:
        wheel = Path(work) / path.rsplit("/", 1)[1]
        download(f"{_FILES}/{path}", wheel, sha256)
        binary = Path(work) / "uv"
        with zipfile.ZipFile(wheel) as archive, archive.open(f"uv-{UV_VERSION}.data/scripts/uv") as member, \
                open(binary, "wb") as out:
            shutil.copyfileobj(member, out)
        binary.chmod(0o755)
        os.replace(binary, uv)  # appears whole or not at all
    print(f"uv {UV_VERSION} installed at {uv} (sha256 {sha256[:12]}... checked)")
    return uv


def download(url: str, target: Path, sha256: str) -> None:
    """``url`` into ``target``, at most MAX_WHEEL_BYTES, refused unless its sha256 is ``sha256``."""
    digest, size = hashlib.sha256(), 0
    print(f"fetching {url.rsplit('/', 1)[1]} from PyPI")
    try:
        with urllib.request.urlopen(url, timeout=READ_TIMEOUT) as response, open(target, "wb") as out:
            while chunk := response.read(1 << 16):
                size += len(chunk)
                if size > MAX_WHEEL_BYTES:
                    raise InstallError(f"{url} is larger than {MAX_WHEEL_BYTES} bytes: refused")
                digest.update(chunk)
                out.write(chunk)
    except (urllib.error.URLError, OSError) as exc:
        raise InstallError(f"could not fetch {url}: {getattr(exc, 'reason', exc)}") from None
    if digest.hexdigest() != sha256:
        raise InstallError(f"{url} has sha256 {digest.hexdigest()}, not the pinned {sha256}: refused, nothing installed")


def version_of(uv: Path) -> str | None:
    if not uv.is_file():
        return None
    try:
        out = subprocess.run([str(uv), "--version"], capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out[1] if len(out) > 1 and out[0] == "uv" else None


def sync(uv: Path) -> None:
    """``uv sync --locked`` of the project on this interpreter (uv makes the environment itself: no venv module)."""
    command = [str(uv), "sync", "--locked", "--python", sys.executable]
    print(f"$ {shown(uv)} sync --locked --python {sys.executable}", flush=True)
    started = time.monotonic()
    subprocess.run(command, cwd=PROJECT, check=True)
    print(f"environment {PROJECT / '.venv'} synced in {time.monotonic() - started:.0f} s")


def on_path(folder: Path) -> bool:
    return any(Path(p).expanduser().resolve() == folder for p in os.environ.get("PATH", "").split(os.pathsep) if p)


def shown(uv: Path) -> str:
    """How to name ``uv`` in a printed command: ``uv`` when that one is first on PATH, else its path."""
    found = shutil.which("uv")
    return "uv" if found and Path(found).resolve() == uv else str(uv)


if __name__ == "__main__":
    sys.exit(main())
