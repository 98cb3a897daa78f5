"""Privacy audit table: an empirical lower bound ε_lower (95 % confidence) for every private algorithm.

Every preset of ``onpair.audit`` (``onpair audit ALGO``) is run 5,000 times on each of two neighbouring
data sets (n = 50, d = 2, the canary at the box corner with the rarer label; half the runs choose the
test, half evaluate it). A real algorithm must stay at or below its claim; a deliberately broken variant
must be caught (ε_lower above the claim). The ``reference`` row is the Gaussian mechanism calibrated
exactly to (ε, δ): what an exactly tight analysis can show with this many runs.
Run: ``.venv/bin/python bench/audit_table.py [--runs 5000] [--no-write] [--presets NAME ...]`` (about 2
minutes on 2 cores for the one-release presets, 3 more for the continual ``onpairstats`` ones, whose runs
feed n records one at a time and read n releases). ``--presets`` runs only the rows of the named presets
and merges them into the table already in bench/results/audit_table.md: the other rows and the computed notes stay as
they were.
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
from results_file import results_path, write_section  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

RESULTS = results_path(__file__)
SECTION = "## Privacy audit"
DELTA = 1e-5
CLAIM = 4.0

#: (algorithm, data, claimed ε, δ): every preset at its own claim (ε = 4, δ = 1e-5 but for the
#: onpairstats-decayed-h4096 pair) on the adversarial canary, then a few at ε = 1, at the pair's claim
#: and on random data, to show what weakens an audit.
ROWS = [(name, "adversarial", *PRESETS[name].claim) for name in PRESETS] + [
    ("reference", "adversarial", 1.0, DELTA),
    ("onpairstrc", "adversarial", 1.0, DELTA),
    ("gradient", "adversarial", 1.0, DELTA),
    ("reference", "adversarial", *PRESETS["onpairstats-decayed-h4096"].claim),
    ("onpairstats-decayed-h4096-kappa1", "adversarial", CLAIM, DELTA),
    ("onpairstrc", "random", CLAIM, DELTA),
    ("offpairstrc", "random", CLAIM, DELTA),
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


HEADER = ["| algorithm | data | claimed ε | δ | runs per data set | ε_lower (95 %) | ε_lower / ε | "
          "separation μ̂ | ε the implementation reports | caught? | expected | s |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]

#: Notes that need no computation (the others are computed from the runs).
STATIC_NOTES = [
    "- *onpairstats* rows (continual release, a release after every record): the canary is the **first** "
    "record (`statistics_neighbouring_datasets`: its label flips, moving count, sum and second moment from "
    "one class block to the other, ‖v(z′) − v(z)‖ = Δ), whose encoder column is the longest; the statistic "
    "is the whole release sequence combined by `release_contrast` (the least-variance estimate of the first "
    "record's change, Σ⁻¹𝟙 over time), projected on the change learnt on the selection half. The μ it can "
    "see at n = 50 is 0.91 (banded Toeplitz: the first record's column holds 50 of the band's 64 "
    "coefficients) and 0.77 (epochs: the "
    "prefix estimates do not reveal every tree node) against the claim's 0.92; the last release alone, "
    "which the model is computed from, would show 0.39 and 0.27. *offpairstats* audits the one release "
    "through `model_type='centroid'` (the same release; the square model saturates and hides part of the "
    "change).",
    '- *onpairstats-moments-m0*: Δ computed as if the moment weight were 0 is 2 instead of 19.88 at the '
    'weights (0.8, 1, 14) the preset uses; at the default weights (0.8, 1, 0.6) Δ = 2b either way, so the '
    'same bug costs nothing there. Bugs that shrink σ by less than about a factor 3 are beyond an audit '
    'of this size at ε = 4, measured with 5,000 runs: one tree level missing from κ (epochs, σ × 0.93, '
    'real ε 4.37) shows ε_lower 0.86, the factorisation charged as if κ = 1 (σ × 0.65, real ε 6.66) 2.52. '
    "A Gaussian mechanism's privacy loss reaches ε only in tails that a few thousand runs do not sample "
    '(the reference row shows 1.40 of an exact 4).',
    "- *onpairstats-decayed-h4096*: `OnPairStats(half_life=4096)`, whose decayed factorisation (stored fit 2^12) "
    "has κ² = Σ c_n² = 3.42; its broken twin *-kappa1* computes σ as if κ² were 1 (σ × 0.54, everything else "
    "unchanged). The audit's n = 50 records reach Σ_{n<50} c_n² = 2.31 of κ², so the broken twin is seen with "
    "√2.31 = 1.52 times the claim's μ and the correct mechanism with √(2.31/3.42) = 0.82 times it. At ε = 4, "
    "δ = 1e-5 that bug is beyond an audit of this size (the row marked 'beyond this claim'); the pair is "
    "audited at its own claim (ε, δ) = (2, 0.1), where the claim's μ is 1.37 and the bug is caught (the "
    "exactly tight reference shows 1.45 there). δ = 0.1 is a weak guarantee, but the bug does not depend on "
    "the claim. The suite runs the broken twin with 1,500 runs per data set (caught for each of seeds 0–11, "
    "ε_lower 2.28–3.18, mean 2.76) and the correct one with 600.",
]


def table_row(name: str, data: str, claim: float, delta: float, runs: int, seed: int):
    """(the table line, whether the outcome is the expected one, evaluation runs) of one audit."""
    start = time.perf_counter()
    r = audit_algorithm(name, runs=runs, epsilon=claim, delta=delta, seed=seed, data=data)
    seconds = time.perf_counter() - start
    broken = PRESETS[name].broken
    # A broken variant audited away from its own claim shows what that claim cannot catch (expected: not caught).
    expect_caught = broken and (claim, delta) == PRESETS[name].claim
    ok = r.caught == expect_caught
    spent = r.details.get("epsilon_spent")
    spent_text = "—" if spent is None else f"{spent:.3g}"
    sep = r.details["separation"]
    sep_text = "∞ (no noise)" if math.isinf(sep) else f"{sep:.2f}"
    expected = "caught" if expect_caught else "≤ claim" if not broken else "beyond this claim"
    verdict = ("**yes**" if r.caught else "no") + ("" if ok else " (UNEXPECTED)")
    line = (f"| {row_label(name)} | {data} | {claim:g} | {delta:g} | {r.runs:,} | {r.epsilon_lower:.2f} | "
            f"{r.epsilon_lower / claim:.0%} | {sep_text} | {spent_text} | {verdict} | {expected} | {seconds:.1f} |")
    return line, ok, r.evaluation_runs


def row_label(name: str) -> str:
    return name + (" (broken)" if PRESETS[name].broken else "")


def row_key(name: str, data: str, claim: float) -> str:
    return f"| {row_label(name)} | {data} | {claim:g} |"


def row_key_of(line: str) -> str:
    """The key (algorithm, data, claimed ε) of a table line, as :func:`row_key` writes it."""
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    return "| " + " | ".join(cells[:3]) + " |"


def merge(presets, runs: int, seed: int, write: bool) -> int:
    """Run the rows of ``presets`` only and merge them into the table in bench/results/audit_table.md."""
    unknown = sorted(set(presets) - set(PRESETS))
    if unknown:
        raise SystemExit(f"unknown presets: {', '.join(unknown)}")
    text = RESULTS.read_text() if RESULTS.exists() else ""
    start = text.find(SECTION + "\n")
    if start < 0:
        raise SystemExit(f"bench/results/audit_table.md has no '{SECTION}' section: run the whole table first")
    end = text.find("\n## ", start + len(SECTION))
    body = text[start + len(SECTION):len(text) if end < 0 else end].strip("\n").split("\n")
    table = [i for i, line in enumerate(body) if line.startswith("|")]
    old = {row_key_of(body[i]): body[i] for i in table[2:]}  # past the header and its rule
    lines, failures = [], []
    for name, data, claim, delta in ROWS:
        key = row_key(name, data, claim)  # (claimed ε, data) tell every row apart: δ is left out of the key
        if name in presets:
            line, ok, _ = table_row(name, data, claim, delta, runs, seed)
            print(line, flush=True)
            if not ok:
                failures.append(name)
        elif key in old:
            line = old[key]
        else:
            print(f"({RESULTS.name} has no row {key}: left out; add it with --presets {name})", flush=True)
            continue
        lines.append(line)
    notes = body[table[-1] + 1:]
    notes += [note for note in STATIC_NOTES if note not in notes]
    if failures:
        notes.append(f"- **Unexpected outcome** for: {', '.join(failures)}.")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    # Keep the dates of earlier merges, except for rows this merge runs again.
    head = [line for line in body[:table[0]] if not (
        line.startswith("- rows of ") and set(line[len("- rows of "):line.index(":")].split(", ")) <= set(presets))]
    head.insert(1, f"- rows of {', '.join(presets)}: {stamp}; command: `bench/audit_table.py --presets "
                   f"{' '.join(presets)}` (the other rows and the computed notes are those of the date above)")
    if write:
        write_section(SECTION, [*head, *HEADER, *lines, *notes])
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000, help="runs on each data set (default 5000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--presets", nargs="+", metavar="NAME",
                        help="run only these presets' rows and merge them into the table in the results file")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, runs=100)
    if args.presets:
        return merge(args.presets, args.runs, args.seed, not args.no_write)
    lines = list(HEADER)
    failures = []
    evaluation_runs = None
    for name, data, claim, delta in ROWS:
        line, ok, evaluation_runs = table_row(name, data, claim, delta, args.runs, args.seed)
        if not ok:
            failures.append(name)
        lines.append(line)
        print(line, flush=True)
    top = ceiling(evaluation_runs, DELTA)
    # How much one audit's ε_lower varies with the seed: the reference mechanism over 20 seeds (cheap).
    spread = {}
    for claim, delta in sorted({(c, d) for _, _, c, d in ROWS}, reverse=True):
        values = [audit_algorithm("reference", runs=args.runs, epsilon=claim, delta=delta, seed=1000 + s)
                  .epsilon_lower for s in range(20)]
        spread[claim, delta] = (float(np.mean(values)), float(np.std(values)))
    spread_text = "; ".join(f"at ε = {c:g}{'' if d == DELTA else f', δ = {d:g}'}: {m:.2f} ± {sd:.2f}"
                            for (c, d), (m, sd) in spread.items())
    mu_text = ", ".join(f"at ε = {c:g}{'' if d == DELTA else f', δ = {d:g}'} "
                        f"μ = {math.sqrt(2 * rho_from_dp(c, d, method='gaussian')):.2f}" for c, d in spread)
    gap = sgd_gap()
    notes = [
        "",
        f"- Ceiling: with {evaluation_runs:,} evaluation runs per data set and no error at all, "
        f"ε_lower = log((1 − δ − u)/u) with u = 1 − 0.025^(1/{evaluation_runs:,}), i.e. {top:.2f}: no "
        "audit of this size can prove more, so a claim above it cannot be caught.",
        "- *separation μ̂*: (mean on D′ − mean on D)/pooled std of the statistic ⟨model, u⟩ on the "
        f"evaluation runs; a Gaussian mechanism tight at (ε, δ = {DELTA:g} unless said) has, {mu_text}. "
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
        *STATIC_NOTES,
    ]
    if failures:
        notes.append(f"- **Unexpected outcome** for: {', '.join(failures)}.")
    print("\n".join(notes))
    if not args.no_write:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        write_section(SECTION, [f"- date: {stamp}; command: `make bench` (`bench/audit_table.py`)", "",
                                " ".join(__doc__.strip().split("\n\n")[0].split("\n")[1:]).strip(), "",
                                *lines, *notes])
    # A quick run (100 runs) cannot catch the broken variants: it checks that the script runs, not the outcomes.
    return 1 if failures and not args.quick else 0


if __name__ == "__main__":
    sys.exit(main())
