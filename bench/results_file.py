"""Write one section of a script's results file, leaving its other sections alone (shared by the benchmarks).

Each script has its own file: ``bench/results/NAME.md`` for the benchmark ``bench/NAME.py`` (what ``make bench``
runs), ``bench/studies/results/NAME.md`` for the study ``bench/studies/NAME.py``; bench/README.md lists them.
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

from onpair.core._io import atomic_write_text

BENCH = Path(__file__).resolve().parent


def results_path(script: str | Path | None = None) -> Path:
    """The results file of ``script`` (default: the script being run): ``results/NAME.md`` beside it."""
    script = Path(script if script is not None else sys.modules["__main__"].__file__).resolve()
    return script.parent / "results" / f"{script.stem}.md"


def write_section(heading: str, body: list[str], path: Path | None = None) -> None:
    """Replace the section from ``heading`` to the next ``## `` heading (or append it) of ``path`` (default: the
    running script's :func:`results_path`), atomically."""
    path = results_path() if path is None else path
    script = path.parent.parent / f"{path.stem}.py"
    title = f"# `{script.relative_to(BENCH.parent).as_posix()}`" if script.is_relative_to(BENCH.parent) else "# Results"
    text = path.read_text() if path.exists() else f"{title}\n\nWritten by the script; see bench/README.md.\n"
    section = heading + "\n\n" + "\n".join(body).rstrip() + "\n"
    pattern = re.compile(r"^" + re.escape(heading) + r"[^\n]*\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip() + "\n\n" + section
    path.parent.mkdir(exist_ok=True)
    atomic_write_text(path, text.rstrip() + "\n")
    if path.parent == BENCH / "results":
        write_summary()


#: The one file of every figure ``make bench`` measured: the benchmarks' own files, gathered (bench/README.md).
SUMMARY = BENCH / "results.md"


def summary_text() -> str:
    """bench/results.md as the benchmarks' files make it: a short header, then each ``bench/results/NAME.md`` in
    name order, its headings one level down (tests/test_docs.py checks the file is this)."""
    parts = ["# Benchmark results\n\nWritten by `make bench` (bench/results_file.py): every regression benchmark's "
             "figures, gathered from its own file under bench/results/ (bench/README.md says what each measures).\n"]
    for path in sorted((BENCH / "results").glob("*.md")):
        body = path.read_text().rstrip()
        parts.append("\n".join("#" + line if line.startswith("#") else line for line in body.splitlines()) + "\n")
    return "\n".join(parts)


def write_summary() -> None:
    """Write bench/results.md from the benchmarks' files (after every section a benchmark writes)."""
    atomic_write_text(SUMMARY, summary_text())


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
