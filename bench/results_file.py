"""Write one section of bench/results.md, leaving the other sections alone (shared by the benchmarks)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

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
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".md")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text.rstrip() + "\n")
        os.replace(tmp, path)  # readers see the old file or the new one, never half of it
    except BaseException:
        os.unlink(tmp)
        raise
