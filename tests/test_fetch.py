"""Downloads, for real, over HTTP from a server on 127.0.0.1 that serves the shared files.

The server (started by the test, on a free port, in a thread) serves zips of the shared Hepatitis and
WDBC files laid out like UCI's archives, a zip whose Hepatitis copy has one byte changed, a truncated
zip, a transfer cut short (more bytes announced than sent) and a 404. Every failure must be an error
and leave nothing behind in the data directory; every network call has a short timeout.
"""

import functools
import hashlib
import http.server
import io
import os
import threading
import zipfile

import pytest

from streams import ChecksumError, DownloadError, fetch, resolve_data_dir
from streams.fetch import main

SHA256 = {  # SOURCES.md
    "hepatitis.data": "9971f9d18abb4fc9dd6749eefb0f864b36fa7bdd59f54188c0b148a5c28214bc",
    "wdbc.data": "d606af411f3e5be8a317a5a8b652b425aaf0ff38ca683d5327ffff94c3695f4a",
    "pima-indians-diabetes.csv": "06f5b7c2cd7bca686fda4f92eab5f61e7ff6426a9acefa2e3dda04fc54293cf5",
}
TIMEOUT = 10.0


def _shared_dir():
    for candidate in (os.environ.get("ONPAIR_DATA"),
                      os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets")):
        if candidate and all(os.path.isfile(os.path.join(candidate, f)) for f in SHA256):
            return os.path.abspath(candidate)
    return None


SHARED = _shared_dir()
pytestmark = pytest.mark.skipif(SHARED is None, reason="the shared data sets are not available "
                                                       "(set ONPAIR_DATA to ../shared/datasets)")


def read_shared(filename):
    with open(os.path.join(SHARED, filename), "rb") as f:
        return f.read()


def make_zip(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the directory; ``/cut/NAME`` announces NAME's full length and sends half of it."""

    requests = []

    def do_GET(self):
        Handler.requests.append(self.path)
        if self.path.startswith("/cut/"):
            data = open(os.path.join(self.directory, self.path[len("/cut/"):]), "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    www = tmp_path_factory.mktemp("www")
    hepatitis = read_shared("hepatitis.data")
    good = make_zip({"hepatitis.data": hepatitis, "hepatitis.names": b"documentation\n", "Index": b"x\n"})
    (www / "good").mkdir()
    (www / "good" / "hepatitis.zip").write_bytes(good)
    # WDBC inside a nested zip, under a folder: the loader must find it anyway.
    inner = make_zip({"wdbc.data": read_shared("wdbc.data"), "wdbc.names": b"doc\n"})
    (www / "good" / "breast+cancer+wisconsin+diagnostic.zip").write_bytes(make_zip({"inner/wdbc.zip": inner}))
    corrupted = bytearray(hepatitis)
    corrupted[200] = ord("7") if corrupted[200] != ord("7") else ord("8")
    (www / "bad").mkdir()
    (www / "bad" / "hepatitis.zip").write_bytes(make_zip({"hepatitis.data": bytes(corrupted)}))
    (www / "truncated").mkdir()
    (www / "truncated" / "hepatitis.zip").write_bytes(good[: len(good) // 2])
    (www / "empty").mkdir()
    (www / "empty" / "hepatitis.zip").write_bytes(make_zip({"other.txt": b"nothing here\n"}))
    (www / "raw").mkdir()
    (www / "raw" / "pima-indians-diabetes.csv").write_bytes(read_shared("pima-indians-diabetes.csv"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(www)))
    httpd.timeout = TIMEOUT
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(TIMEOUT)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    Handler.requests.clear()


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_download_extract_verify(server, tmp_path):
    data_dir = tmp_path / "new" / "data"  # created on demand
    path = fetch("hepatitis", data_dir=data_dir, base_url=server + "/good", timeout=TIMEOUT)
    assert path == data_dir / "hepatitis.data"
    assert sha256(path) == SHA256["hepatitis.data"]
    assert os.listdir(data_dir) == ["hepatitis.data"]  # no archive, no temporary file
    assert Handler.requests == ["/good/hepatitis.zip"]
    # Present and verified: no second download.
    assert fetch("hepatitis", data_dir=data_dir, base_url=server + "/good", timeout=TIMEOUT) == path
    assert Handler.requests == ["/good/hepatitis.zip"]


def test_nested_archive_and_full_url(server, tmp_path):
    url = server + "/good/breast+cancer+wisconsin+diagnostic.zip"
    path = fetch("wdbc", data_dir=tmp_path, url=url, timeout=TIMEOUT)
    assert sha256(path) == SHA256["wdbc.data"] and os.listdir(tmp_path) == ["wdbc.data"]


def test_wrong_checksum_is_an_error_and_leaves_nothing(server, tmp_path):
    with pytest.raises(ChecksumError, match=SHA256["hepatitis.data"]) as info:
        fetch("hepatitis", data_dir=tmp_path, base_url=server + "/bad", timeout=TIMEOUT)
    assert "/bad/hepatitis.zip" in str(info.value)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("url_path, match", [
    ("/cut/good/hepatitis.zip", "incomplete|failed"),   # connection closed before Content-Length bytes
    ("/truncated/hepatitis.zip", "not a valid zip"),     # a complete transfer of a broken archive
    ("/empty/hepatitis.zip", "no file named 'hepatitis.data'"),
    ("/missing/hepatitis.zip", "HTTP error 404"),
])
def test_broken_downloads_are_errors_and_leave_nothing(server, tmp_path, url_path, match):
    with pytest.raises(DownloadError, match=match):
        fetch("hepatitis", data_dir=tmp_path, url=server + url_path, timeout=TIMEOUT)
    assert os.listdir(tmp_path) == []


def test_unreachable_server_is_an_error(tmp_path):
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError, match="cannot connect|failed"):
        fetch("hepatitis", data_dir=tmp_path, url=f"http://127.0.0.1:{port}/hepatitis.zip", timeout=TIMEOUT)
    assert os.listdir(tmp_path) == []


def test_present_file_with_wrong_checksum(server, tmp_path):
    (tmp_path / "hepatitis.data").write_bytes(b"not the data\n")
    with pytest.raises(ChecksumError, match="already present"):
        fetch("hepatitis", data_dir=tmp_path, base_url=server + "/good", timeout=TIMEOUT)
    assert (tmp_path / "hepatitis.data").read_bytes() == b"not the data\n" and Handler.requests == []
    # A failed forced download keeps the old file; a good one replaces it.
    with pytest.raises(ChecksumError):
        fetch("hepatitis", data_dir=tmp_path, base_url=server + "/bad", force=True, timeout=TIMEOUT)
    assert os.listdir(tmp_path) == ["hepatitis.data"]
    assert (tmp_path / "hepatitis.data").read_bytes() == b"not the data\n"
    fetch("hepatitis", data_dir=tmp_path, base_url=server + "/good", force=True, timeout=TIMEOUT)
    assert sha256(tmp_path / "hepatitis.data") == SHA256["hepatitis.data"]
    assert os.listdir(tmp_path) == ["hepatitis.data"]


def test_pima_needs_a_copy(server, tmp_path):
    with pytest.raises(ValueError, match="withdrawn") as info:
        fetch("pima", data_dir=tmp_path)
    assert str(tmp_path / "pima-indians-diabetes.csv") in str(info.value)
    assert SHA256["pima-indians-diabetes.csv"] in str(info.value)
    with pytest.raises(ValueError, match="no UCI archive"):
        fetch("pima", data_dir=tmp_path, base_url=server + "/raw")
    # From a copy the user trusts (a plain file, not an archive), checked all the same.
    path = fetch("pima", data_dir=tmp_path, url=server + "/raw/pima-indians-diabetes.csv", timeout=TIMEOUT)
    assert sha256(path) == SHA256["pima-indians-diabetes.csv"] and os.listdir(tmp_path) == [path.name]


def test_plain_file_with_wrong_checksum(server, tmp_path):
    with pytest.raises(ChecksumError):
        fetch("wdbc", data_dir=tmp_path, url=server + "/raw/pima-indians-diabetes.csv", timeout=TIMEOUT)
    assert os.listdir(tmp_path) == []


def test_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        fetch("iris", data_dir=tmp_path)
    with pytest.raises(ValueError, match="timeout"):
        fetch("hepatitis", data_dir=tmp_path, timeout=0)
    with pytest.raises(ValueError, match="data_dir"):
        resolve_data_dir(3)


def test_data_directory_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("ONPAIR_DATA", str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("ONPAIR_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_data_dir() == tmp_path / "home" / ".onpair" / "data"


def test_command_line(server, tmp_path, capsys):
    assert main(["hepatitis", "--data-dir", str(tmp_path), "--base-url", server + "/good",
                 "--timeout", str(TIMEOUT)]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "hepatitis.data") in out and "sha256 verified" in out
    assert main(["pima", "--data-dir", str(tmp_path / "other")]) == 1
    assert "withdrawn" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["iris"])
