"""Refresh the vendored Swagger UI and ReDoc files of the dashboard's offline API docs.

Not a build step: the files are committed (app/ui/static/vendor/), so a fresh clone needs
nothing. Run this only to move to another version; it fetches the npm packages with
``npm pack`` (or reads tarballs already fetched), copies the files the docs pages use with
their licenses, applies the one patch below, and rewrites the manifest the tests check::

    python scripts/vendor_docs_assets.py --swagger-ui 5.35.0 --redoc 2.5.4

The patch: ReDoc's sidebar shows "API docs by Redocly" with a logo it loads from
cdn.redoc.ly (there is no option to turn it off, in 2.x or 3.x). The docs must not ask any
other host, so that URL becomes an empty inline SVG (the link text stays).
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "app" / "ui" / "static" / "vendor"
SWAGGER_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt")
REDOC_FILES = ("bundles/redoc.standalone.js", "LICENSE", "bundles/redoc.standalone.js.LICENSE.txt")
REDOC_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_SVG = b"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E"
LICENSES = {"swagger-ui-dist": "Apache-2.0", "redoc": "MIT"}


def fetch(package: str, version: str, workdir: Path) -> Path:
    out = subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=workdir, check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return workdir / out


def extract(tarball: Path, members: tuple[str, ...], target: Path) -> dict[str, bytes]:
    target.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    with tarfile.open(tarball) as archive:
        for member in members:
            handle = archive.extractfile(f"package/{member}")
            if handle is None:
                raise SystemExit(f"{tarball.name}: no {member}")
            files[Path(member).name] = handle.read()
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--swagger-ui", required=True, metavar="VERSION", help="swagger-ui-dist version")
    parser.add_argument("--redoc", required=True, metavar="VERSION", help="redoc version (2.x: one classic script)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for package, version, members, folder in (("swagger-ui-dist", args.swagger_ui, SWAGGER_FILES, "swagger-ui"),
                                                  ("redoc", args.redoc, REDOC_FILES, "redoc")):
            print(f"npm pack {package}@{version}", file=sys.stderr)
            files = extract(fetch(package, version, work), members, VENDOR / folder)
            for name, data in files.items():
                upstream = hashlib.sha256(data).hexdigest()
                if name == "redoc.standalone.js":
                    if data.count(REDOC_LOGO) != 1:
                        raise SystemExit("redoc.standalone.js: the logo URL to patch was not found exactly once")
                    data = data.replace(REDOC_LOGO, EMPTY_SVG)
                (VENDOR / folder / name).write_bytes(data)
                rows.append((f"{folder}/{name}", f"{package}@{version}", LICENSES[package], upstream,
                             hashlib.sha256(data).hexdigest()))
    print("| file | from | license | sha256 upstream | sha256 here |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
