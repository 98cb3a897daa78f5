"""The data directory, and downloads of the UCI data sets with a sha256 check and an atomic write.

The data directory is, in order: the ``data_dir`` argument, ``$ONPAIR_DATA``, ``~/.onpair/data``.

:func:`fetch` downloads the official UCI archive of a data set, extracts the one file the loader reads,
checks its sha256 against the spec (:mod:`streams.uci`) and only then moves it into place with
``os.replace``: a wrong checksum, a broken or truncated download, an HTTP error or an archive without
the file is an error, and nothing half-written is left in the data directory. Pima Indians Diabetes was
withdrawn from UCI: :func:`fetch` says where to put a copy (or downloads one from a ``url`` you give,
with the same checks).

Command line: ``onpair fetch NAME [NAME ...]`` (``python -m streams.fetch`` does the same), see :func:`main`.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

__all__ = ["fetch", "resolve_data_dir", "sha256_file", "check_sha256", "ChecksumError", "DownloadError",
           "ENV_DATA_DIR", "DEFAULT_DATA_DIR", "main"]

ENV_DATA_DIR = "ONPAIR_DATA"
DEFAULT_DATA_DIR = "~/.onpair/data"
MAX_BYTES = 256 * 2**20  # refuse downloads or extracted files beyond this (the UCI files are < 1 MiB)
_CHUNK = 2**16


class ChecksumError(ValueError):
    """A file whose sha256 is not the one its spec records."""


class DownloadError(OSError):
    """A download that failed: HTTP error, connection lost, truncated transfer, unusable archive."""


def resolve_data_dir(data_dir=None) -> Path:
    """The data directory: ``data_dir`` if given, else ``$ONPAIR_DATA``, else ``~/.onpair/data``.

    The directory is not created here (:func:`fetch` creates it when it writes).

    Examples
    --------
    >>> str(resolve_data_dir("/tmp/onpair-data"))
    '/tmp/onpair-data'
    """
    if data_dir is None:
        data_dir = os.environ.get(ENV_DATA_DIR) or DEFAULT_DATA_DIR
    elif not isinstance(data_dir, (str, os.PathLike)):
        raise ValueError(f"data_dir must be a path, got {data_dir!r}")
    return Path(os.path.expanduser(os.fspath(data_dir)))


def describe_data_dir(data_dir=None) -> str:
    """Where the data directory comes from, for error messages."""
    if data_dir is not None:
        return "the data_dir argument"
    if os.environ.get(ENV_DATA_DIR):
        return f"${ENV_DATA_DIR}"
    return f"the default; set ${ENV_DATA_DIR} to use another folder"


def sha256_file(path) -> str:
    """The sha256 of a file, read in chunks.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "empty")
    >>> open(path, "wb").close()
    >>> sha256_file(path)[:16]
    'e3b0c44298fc1c14'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_sha256(path, expected: str, *, what: str | None = None) -> None:
    """Raise :class:`ChecksumError` naming the file and both digests unless ``path`` hashes to ``expected``."""
    actual = sha256_file(path)
    if actual != expected.lower():
        raise ChecksumError(f"{what or os.fspath(path)}: sha256 is {actual}, expected {expected}; the file is "
                            "corrupted or is not the distributed version")


def fetch(name: str, data_dir=None, url: str | None = None, *, base_url: str | None = None,
          force: bool = False, timeout: float = 60.0) -> Path:
    """Download one of the UCI data sets into the data directory and return the file's path.

    Parameters
    ----------
    name : str
        A data set of :mod:`streams.uci`: ``"hepatitis"``, ``"pima"``, ``"retinopathy"``, ``"wdbc"``.
    data_dir : path, optional
        Default: ``$ONPAIR_DATA``, else ``~/.onpair/data`` (created if needed).
    url : str, optional
        Download from here instead of UCI: a zip archive holding the file (anywhere inside, or inside
        a zip inside it), or the file itself. The sha256 is checked all the same.
    base_url : str, optional
        A mirror of UCI's archives: the download is ``base_url/<archive name>`` (e.g.
        ``base_url/hepatitis.zip``). Ignored when ``url`` is given.
    force : bool, default False
        Download even when a file of that name is already there (it is replaced only after the new one
        has been checked). Without ``force``, a present file with the right sha256 is returned as is,
        and one with a wrong sha256 is an error (it is left alone).
    timeout : float, default 60
        Seconds to wait for the server on each network operation.

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    ChecksumError
        The extracted (or present) file has the wrong sha256; nothing is written.
    DownloadError
        The download failed or was cut short, or the archive is unusable; nothing is written.
    ValueError
        Unknown ``name``, or Pima without a ``url`` (the message says where to put a copy).

    Examples
    --------
    >>> fetch("pima", data_dir="/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Pima Indians Diabetes was withdrawn from the UCI repository...
    """
    from .uci import get_spec, missing_file_message

    spec = get_spec(name)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    directory = resolve_data_dir(data_dir)
    destination = directory / spec.filename
    if destination.exists() and not force:
        check_sha256(destination, spec.sha256, what=f"{destination} (already present; pass force=True "
                                                     "to download it again)")
        return destination
    if url is None and base_url is not None:
        if spec.url is None:
            raise ValueError(f"{spec.title} has no UCI archive to mirror: pass url= of a copy you trust")
        url = base_url.rstrip("/") + "/" + spec.archive_name
    if url is None:
        url = spec.url
    if url is None:
        raise ValueError(missing_file_message(spec, data_dir))
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"url must be a non-empty string, got {url!r}")
    directory.mkdir(parents=True, exist_ok=True)
    temporaries = []
    try:
        download = _temporary(directory, spec.filename, ".download", temporaries)
        _download(url, download, timeout)
        if zipfile.is_zipfile(download):
            candidate = _temporary(directory, spec.filename, ".part", temporaries)
            _extract(download, spec.filename, candidate, url)
        elif url.lower().split("?")[0].endswith(".zip"):
            raise DownloadError(f"{url}: the download is not a valid zip archive (truncated or corrupted)")
        else:
            candidate = download
        check_sha256(candidate, spec.sha256, what=f"{spec.filename} downloaded from {url}")
        os.chmod(candidate, 0o644)
        os.replace(candidate, destination)
        temporaries.remove(candidate)
    finally:
        for path in temporaries:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    return destination


def _temporary(directory: Path, filename: str, suffix: str, registry: list) -> str:
    """An empty temporary file beside the destination (so os.replace is atomic), registered for cleanup."""
    fd, path = tempfile.mkstemp(prefix=f".{filename}.", suffix=suffix, dir=directory)
    os.close(fd)
    registry.append(path)
    return path


def _download(url: str, path: str, timeout: float) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "onpair-fetch"})
    # A fresh opener per call reads the proxy settings of the environment as it is now.
    opener = urllib.request.build_opener()
    try:
        with opener.open(request, timeout=timeout) as response, open(path, "wb") as out:
            expected = response.headers.get("Content-Length")
            expected = int(expected) if expected and expected.isdigit() else None
            received = 0
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                received += len(chunk)
                if received > MAX_BYTES:
                    raise DownloadError(f"{url}: the download exceeds {MAX_BYTES} bytes; refusing it")
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"{url}: HTTP error {exc.code} ({exc.reason})") from None
    except urllib.error.URLError as exc:
        raise DownloadError(f"{url}: cannot connect ({exc.reason})") from None
    except (http.client.HTTPException, OSError) as exc:
        if isinstance(exc, DownloadError):
            raise
        raise DownloadError(f"{url}: the download failed ({type(exc).__name__}: {exc})") from None
    if expected is not None and received != expected:
        raise DownloadError(f"{url}: the download is incomplete: {received} of {expected} bytes")


def _extract(archive: str, filename: str, out_path: str, url: str) -> None:
    """Copy the member called ``filename`` (anywhere in the archive, or one nested zip down) to ``out_path``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            member = _find_member(zf, filename)
            if member is not None:
                _copy_member(zf, member, out_path, url)
                return
            for inner in zf.infolist():
                if inner.filename.lower().endswith(".zip") and not inner.is_dir():
                    with zf.open(inner) as raw, zipfile.ZipFile(raw) as nested:
                        member = _find_member(nested, filename)
                        if member is not None:
                            _copy_member(nested, member, out_path, url)
                            return
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        if isinstance(exc, DownloadError):
            raise
        raise DownloadError(f"{url}: the archive is unusable ({type(exc).__name__}: {exc})") from None
    raise DownloadError(f"{url}: the archive holds no file named {filename!r}")


def _find_member(zf: zipfile.ZipFile, filename: str):
    matches = [info for info in zf.infolist() if not info.is_dir() and not info.filename.startswith("__MACOSX/")
               and info.filename.rsplit("/", 1)[-1] == filename]
    return min(matches, key=lambda info: info.filename.count("/")) if matches else None


def _copy_member(zf: zipfile.ZipFile, member: zipfile.ZipInfo, out_path: str, url: str) -> None:
    if member.file_size > MAX_BYTES:
        raise DownloadError(f"{url}: {member.filename} would be {member.file_size} bytes; refusing it")
    with zf.open(member) as src, open(out_path, "wb") as dst:  # zipfile checks the CRC as it reads
        shutil.copyfileobj(src, dst, _CHUNK)


def main(argv=None) -> int:
    """``onpair fetch NAME [NAME ...]``: download and verify data sets; prints one line per data set.

    Returns the exit status: 0 when every data set is in place and verified, 1 otherwise (each failure
    is explained on stderr).
    """
    from .uci import SPECS

    parser = argparse.ArgumentParser(
        prog="onpair fetch",
        description="Download UCI data sets into the data directory ($ONPAIR_DATA, else ~/.onpair/data) "
                    "and check their sha256.")
    parser.add_argument("names", nargs="+", metavar="NAME", choices=[*SPECS, "all"],
                        help="data set(s): " + ", ".join(SPECS) + ", or all")
    parser.add_argument("--data-dir", default=None, help="folder to write to (default: $ONPAIR_DATA, "
                                                          "else ~/.onpair/data)")
    parser.add_argument("--url", default=None, help="download from this URL instead of UCI (one data set)")
    parser.add_argument("--base-url", default=None, help="a mirror of UCI's archives")
    parser.add_argument("--force", action="store_true", help="download again even when the file is present")
    parser.add_argument("--timeout", type=float, default=60.0, help="network timeout in seconds (default 60)")
    args = parser.parse_args(argv)
    names = list(SPECS) if "all" in args.names else list(dict.fromkeys(args.names))
    if args.url is not None and len(names) != 1:
        parser.error("--url needs exactly one data set")
    status = 0
    for name in names:
        try:
            path = fetch(name, args.data_dir, args.url, base_url=args.base_url, force=args.force,
                         timeout=args.timeout)
        except (ValueError, OSError) as exc:
            print(f"onpair fetch {name}: error: {exc}", file=sys.stderr)
            status = 1
        else:
            print(f"{name}: {path} (sha256 verified)")
    return status


if __name__ == "__main__":
    sys.exit(main())
