"""The benchmarks' quick mode: ``make bench QUICK=1`` (which CI runs) passes ``--quick`` to every script.

A quick run checks that a benchmark runs end to end on a fresh clone, on small sizes (one seed, one split,
a few records); its numbers measure nothing and nothing is written to its results file
(bench/results/).
"""

from __future__ import annotations

HELP = "small sizes, one seed: check that the script runs (its numbers mean nothing); writes nothing"


def add_quick(parser) -> None:
    """Give a benchmark's argument parser the ``--quick`` flag."""
    parser.add_argument("--quick", action="store_true", help=HELP)


def apply_quick(args, **small) -> None:
    """With ``--quick``: write nothing and replace the sizes in ``small`` (argument name → quick value)."""
    if getattr(args, "quick", False):
        args.no_write = True
        for name, value in small.items():
            setattr(args, name, value)
