"""Privacy audit table: an empirical lower bound ε_lower (95 % confidence) for every private algorithm.

Every preset of ``onpair.audit`` (``onpair audit ALGO``) is run 5,000 times on each of two neighbouring
data sets (n = 50, d = 2, the canary at the box corner with the rarer label; half the runs choose the
test, half evaluate it). A real algorithm must stay at or below its claim; a deliberately broken variant
must be caught (ε_lower above the claim). The ``reference`` row is the Gaussian mechanism calibrated
exactly to (ε, δ): what an exactly tight analysis can show with this many runs.
Run: ``.venv/bin/python bench/audit_table.py [--runs 5000] [--no-write]`` (about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from pathlib import Path

import numpy as np

from onpair.audit import PRESETS, audit_algorithm, neighbouring_datasets
from onpair.estimators import OutputPerturbedSGD
from onpair.privacy import rho_from_dp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import write_section  # noqa: E402

SECTION = "## Privacy audit"
DELTA = 1e-5
CLAIM = 4.0

#: (algorithm, data, claimed ε): every preset at ε = 4 on the adversarial canary, then a few at ε = 1 and
#: on random data, to show what weakens an audit.
ROWS = [(name, "adversarial", CLAIM) for name in PRESETS] + [
    ("reference", "adversarial", 1.0),
    ("onpairstrc", "adversarial", 1.0),
    ("gradient", "adversarial", 1.0),
    ("onpairstrc", "random", CLAIM),
    ("offpairstrc", "random", CLAIM),
]


def ceiling(evaluation_runs: int, delta: float, confidence: float = 0.95) -> float:
    """ε_lower of a test without a single error: log((1 − δ − u)/u), u = 1 − (α/2)^(1/N)."""
    u = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / evaluation_runs)
    return math.log((1.0 - delta - u) / u)


def sgd_gap(n: int = 50, draws: int = 20) -> float:
    """Yang et al.'s sensitivity Δ₅ (what eq. (5) pays for) ÷ the mean actual change of the averaged
    iterate when the canary replaces the last record (non-private twins, same draws)."""
    D, D_prime, bounds, _ = neighbouring_datasets(n, 2)
    changes = []
    for seed in range(draws):
        params = dict(epsilon=CLAIM, delta=DELTA, bounds=bounds, T=n, loss="hinge", random_state=seed)
        a = OutputPerturbedSGD(private=False, **params).fit(*D).coef_
        b = OutputPerturbedSGD(private=False, **params).fit(*D_prime).coef_
        changes.append(np.linalg.norm(b - a))
    paid = OutputPerturbedSGD(**dict(params, random_state=0)).fit(*D_prime).privacy_report_["releases"][0]
    return paid["sensitivity"] / float(np.mean(changes))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000, help="runs on each data set (default 5000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    lines = ["| algorithm | data | claimed ε | δ | runs per data set | ε_lower (95 %) | ε_lower / ε | "
             "separation μ̂ | ε the implementation reports | caught? | expected | s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    failures = []
    evaluation_runs = None
    for name, data, claim in ROWS:
        start = time.perf_counter()
        r = audit_algorithm(name, runs=args.runs, epsilon=claim, delta=DELTA, seed=args.seed, data=data)
        seconds = time.perf_counter() - start
        evaluation_runs = r.evaluation_runs
        broken = PRESETS[name].broken
        ok = r.caught == broken
        if not ok:
            failures.append(name)
        spent = r.details.get("epsilon_spent")
        spent_text = "—" if spent is None else f"{spent:.3g}"
        sep = r.details["separation"]
        sep_text = "∞ (no noise)" if math.isinf(sep) else f"{sep:.2f}"
        expected = "caught" if broken else "≤ claim"
        verdict = ("**yes**" if r.caught else "no") + ("" if ok else " (UNEXPECTED)")
        label = f"{name}" + (" (broken)" if broken else "")
        lines.append(f"| {label} | {data} | {claim:g} | {DELTA:g} | {r.runs:,} | {r.epsilon_lower:.2f} | "
                     f"{r.epsilon_lower / claim:.0%} | {sep_text} | {spent_text} | {verdict} | {expected} | "
                     f"{seconds:.1f} |")
        print(lines[-1], flush=True)
    top = ceiling(evaluation_runs, DELTA)
    # How much one audit's ε_lower varies with the seed: the reference mechanism over 20 seeds (cheap).
    spread = {}
    for claim in sorted({c for _, _, c in ROWS}, reverse=True):
        values = [audit_algorithm("reference", runs=args.runs, epsilon=claim, delta=DELTA, seed=1000 + s)
                  .epsilon_lower for s in range(20)]
        spread[claim] = (float(np.mean(values)), float(np.std(values)))
    spread_text = "; ".join(f"at ε = {c:g}: {m:.2f} ± {sd:.2f}" for c, (m, sd) in spread.items())
    mu_text = ", ".join(f"at ε = {c:g} μ = {math.sqrt(2 * rho_from_dp(c, DELTA, method='gaussian')):.2f}"
                        for c in spread)
    gap = sgd_gap()
    notes = [
        "",
        f"- Ceiling: with {evaluation_runs:,} evaluation runs per data set and no error at all, "
        f"ε_lower = log((1 − δ − u)/u) with u = 1 − 0.025^(1/{evaluation_runs:,}), i.e. {top:.2f}: no "
        "audit of this size can prove more, so a claim above it cannot be caught.",
        "- *separation μ̂*: (mean on D′ − mean on D)/pooled std of the statistic ⟨model, u⟩ on the "
        f"evaluation runs; a Gaussian mechanism tight at (ε, δ = {DELTA:g}) has, {mu_text}. "
        "For the Huai et al. learners the canary's actual change is 2/G(R) ≈ 98 % of the sensitivity "
        "they pay for (R = 0.01); Kang et al.'s T = 1 step is exactly tight. Even so, ε_lower is a "
        "fraction of ε: the privacy loss of a Gaussian mechanism reaches ε only in tails that a few "
        "thousand runs do not sample (the reference rows show what a tight analysis gives).",
        f"- Seed-to-seed variation: the reference mechanism's ε_lower over 20 other seeds, mean ± std, "
        f"{spread_text}. A single row can sit that far above or below the reference row by chance.",
        f"- *sgd*: Yang et al.'s eq. (5) σ is calibrated to a high-probability sensitivity {gap:.0f}× "
        "the canary's actual change of the averaged iterate (T = n, mean over 20 draws), so the release is noise "
        "and the audit sees nothing; its report proves a larger ε than the paper's claim "
        "(`epsilon_spent`, the √e factor of the proof).",
        "- *random* data: the canary's pairs are shorter than the domain's diameter and the record it "
        "replaces moves the model too, so the change is smaller than the worst case and the audit weaker.",
    ]
    if failures:
        notes.append(f"- **Unexpected outcome** for: {', '.join(failures)}.")
    print("\n".join(notes))
    if not args.no_write:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        write_section(SECTION, [f"- date: {stamp}; command: `make bench` (`bench/audit_table.py`)", "",
                                " ".join(__doc__.strip().split("\n\n")[0].split("\n")[1:]).strip(), "",
                                *lines, *notes])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
