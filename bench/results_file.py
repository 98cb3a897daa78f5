"""Write one section of bench/results.md, leaving the other sections alone (shared by the benchmarks)."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

from onpair.core._io import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results.md"


def write_section(heading: str, body: list[str], path: Path = RESULTS) -> None:
    """Replace the section from ``heading`` to the next ``## `` heading (or append it), atomically."""
    text = path.read_text() if path.exists() else "# Benchmarks\n\nWritten by `make bench`.\n"
    section = heading + "\n\n" + "\n".join(body).rstrip() + "\n"
    pattern = re.compile(r"^" + re.escape(heading) + r"[^\n]*\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip() + "\n\n" + section
    atomic_write_text(path, text.rstrip() + "\n")


@contextlib.contextmanager
def captured_stdout():
    """Print as usual and also collect what is printed: ``with captured_stdout() as chunks: ...``, then
    ``"".join(chunks)`` is the text of a results section."""
    chunks: list[str] = []

    class Tee:
        def write(self, text):
            sys.__stdout__.write(text)
            chunks.append(text)

        def flush(self):
            sys.__stdout__.flush()

    sys.stdout = Tee()
    try:
        yield chunks
    finally:
        sys.stdout = sys.__stdout__
