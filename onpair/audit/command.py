"""The command line of the audits: ``onpair audit ALGO [--runs N] [--epsilon E] …`` (:func:`main`)."""

from __future__ import annotations

import argparse
import json
import sys

from .bound import DATA_KINDS, DEFAULT_D, DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_N
from .presets import PRESETS, audit_algorithm


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``onpair audit`` arguments, for hooking into a sub-command parser."""
    parser.add_argument("algo", metavar="ALGO", choices=list(PRESETS),
                        help="one of: " + ", ".join(PRESETS))
    own_claim = ", ".join(f"{name}: ({p.claim[0]:g}, {p.claim[1]:g})" for name, p in PRESETS.items()
                          if p.claim != (DEFAULT_EPSILON, DEFAULT_DELTA))
    own_runs = ", ".join(f"{name}: {p.runs}" for name, p in PRESETS.items() if p.runs is not None)
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs on each data set (default 1000, or the preset's own: {own_runs or 'none'})")
    parser.add_argument("--epsilon", type=float, default=None,
                        help=f"the ε the mechanism is configured with and claims (default {DEFAULT_EPSILON:g}, or "
                             f"the preset's own (ε, δ): {own_claim or 'none'})")
    parser.add_argument("--delta", type=float, default=None, help=f"δ (default {DEFAULT_DELTA:g}, or the preset's own)")
    parser.add_argument("--seed", type=int, default=0, help="root seed of every run (default 0)")
    own_n = ", ".join(f"{name}: {p.n}" for name, p in PRESETS.items() if p.n is not None)
    parser.add_argument("--n", type=int, default=None,
                        help=f"records per data set (default {DEFAULT_N}, or the preset's own: {own_n or 'none'})")
    parser.add_argument("--d", type=int, default=DEFAULT_D, help=f"features (default {DEFAULT_D})")
    parser.add_argument("--data", choices=DATA_KINDS, default="adversarial",
                        help="neighbouring data sets (default adversarial: the strongest canary)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run_from_args(args) -> int:
    """Run the audit described by parsed ``args``; print it; exit status 0 (1 on a bad argument)."""
    try:
        result = audit_algorithm(args.algo, runs=args.runs, epsilon=args.epsilon, delta=args.delta,
                                 seed=args.seed, n=args.n, d=args.d, data=args.data,
                                 confidence=args.confidence)
    except ValueError as exc:
        print(f"onpair audit: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    r = result
    verdict = "CAUGHT: the claim is violated" if r.caught else "consistent with the claim"
    print(f"{r.algorithm}: {r.details.get('description', '')}")
    print(f"  claimed      epsilon {r.claimed_epsilon:g} at delta {r.delta:g}")
    print(f"  audit        epsilon_lower {r.epsilon_lower:.3f} ({r.confidence:.0%} confidence), {verdict}")
    print(f"  test         statistic {r.rule} {r.threshold:.6g}: FPR {r.fpr:.4f} (<= {r.fpr_upper:.4f}), "
          f"FNR {r.fnr:.4f} (<= {r.fnr_upper:.4f})")
    print(f"  runs         {r.runs} per data set ({r.details['selection_runs']} choose the test, "
          f"{r.evaluation_runs} evaluate it), separation {r.details['separation']:.3f}")
    return 0


def main(argv=None) -> int:
    """``onpair audit ALGO [--runs N] [--epsilon E] [--delta D] [--seed S] [--json]``; ``argv`` is what
    follows ``onpair audit``."""
    parser = argparse.ArgumentParser(
        prog="onpair audit",
        description="Empirical privacy audit: a lower bound on the epsilon an implementation has, from "
                    "many runs on two neighbouring data sets (Clopper-Pearson bounds).")
    add_arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    return run_from_args(args)
