"""A dependency-free progress bar for the demos and the command line (writes to stderr)."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """Minimal text progress bar: ``with ProgressBar(total) as bar: bar.update(k)``.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with ProgressBar(10, stream=out, label="demo") as bar:
    ...     bar.update(10)
    >>> "10/10" in out.getvalue()
    True
    """

    def __init__(self, total: int, label: str = "", width: int = 30, stream=None):
        self.total = max(int(total), 1)
        self.label = label
        self.width = width
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.start = time.perf_counter()
        self.suffix = ""

    def update(self, count: int = 1, suffix: str | None = None) -> None:
        self.done = min(self.total, self.done + int(count))
        if suffix is not None:
            self.suffix = suffix
        filled = int(self.width * self.done / self.total)
        rate = self.done / max(time.perf_counter() - self.start, 1e-9)
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} "
            f"({rate:,.0f} rec/s) {self.suffix}"
        )
        self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stream.write("\n")
        self.stream.flush()
        return False
