"""The ℓ2 sensitivity of one record's contribution to the per-class pairwise statistics.

A record z = (x, y), x in the unit ball (the public bounds map puts it there), contributes
v(z) = [a·e_y, b·x⊗e_y, m·vech(xxᵀ)⊗e_y] (:mod:`onpair.statistics._kernels`): in the block of its class
y, the count weight a, the weighted record b·x and the weighted second moment m·vech(xxᵀ), in orthonormal
coordinates so that ‖vech(M)‖₂ = ‖M‖_F. Neighbouring streams replace one record z by z' at the same
position; the sensitivity is Δ = sup ‖v(z) − v(z')‖₂ over ‖x‖, ‖x'‖ ≤ 1 and any two labels of the
public class domain. The weights a, b, m are public: they share the budget between the three kinds of
statistic (docs/algorithms.md#continual-release).

The classifier's **pooled** layout (``moments="pooled"``) releases the counts and sums per class and one
second moment for all classes, v(z) = [a·e_y, b·x⊗e_y, m·vech(xxᵀ)]: its sensitivity is the same Δ
(:func:`statistics_sensitivity` proves both), whatever the number of classes C ≥ 2. The sensitivity of
either layout does not depend on C: a record touches one class's block, so a replaced record changes at
most two, for two classes as for twenty.
"""

from __future__ import annotations

import math

from .checks import check_positive


def _weight(value, name: str, allow_zero: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"{name} must be a number >= 0, got {value!r}")
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def same_label_sensitivity_squared(b: float, m: float) -> float:
    """sup ‖v(z) − v(z')‖² when z and z' carry the same label: the exact supremum over the unit ball.

    With r = ‖x‖, s = ‖x'‖ and γ = cos∠(x, x'),

        f = b²‖x − x'‖² + m²‖xxᵀ − x'x'ᵀ‖²_F = b²(r² + s² − 2rsγ) + m²(r⁴ + s⁴ − 2r²s²γ²),

    a concave quadratic in γ ∈ [−1, 1] (the γ² coefficient is −2m²r²s² ≤ 0), maximal at
    γ* = −b²/(2m²rs) clipped to [−1, 1].

    * **b² ≥ 2m².** Then γ* ≤ −1 for every r, s ≤ 1, so f ≤ b²(r + s)² + m²(r² − s²)². Write p = r + s ∈
      [0, 2]; since r, s ≤ 1, |r − s| ≤ min(p, 2 − p) and (r² − s²)² = p²(r − s)², so
      f ≤ h(p) = p²(b² + m² min(p, 2 − p)²). For p ≤ 1, h ≤ b² + m² ≤ 4b². For p ∈ [1, 2],
      h(p) − 4b² = (2 − p)[m²p²(2 − p) − b²(2 + p)] ≤ 0, since p²(2 − p) ≤ 32/27 on [1, 2] and m² ≤ b²/2
      give m²p²(2 − p) ≤ (16/27)b² < 3b² ≤ b²(2 + p). Hence **sup = 4b²**, attained at x' = −x with
      ‖x‖ = 1.
    * **b² < 2m².** Where 2m²rs > b², γ* ∈ (−1, 0) and
      f(γ*) = b²(r² + s²) + m²(r⁴ + s⁴) + b⁴/(2m²), increasing in r and s: at most
      2b² + 2m² + b⁴/(2m²) (attained at r = s = 1, γ = −b²/(2m²)). Where 2m²rs ≤ b², γ = −1 and
      f = b²(r² + s²) + m²(r⁴ + s⁴) + (2b²u − 2m²u²) with u = rs; the bracket is at most its maximum
      over u, b⁴/(2m²), so the same bound holds. Hence **sup = 2b² + 2m² + b⁴/(2m²)**.

    Both cases agree at b² = 2m² (value 4b²). ``tests/test_statistics_learner.py`` checks the value
    against sampled and adversarially optimised pairs.

    Examples
    --------
    >>> same_label_sensitivity_squared(1.0, 0.5), same_label_sensitivity_squared(1.0, 1.0)
    (4.0, 4.5)
    """
    b, m = float(b), float(m)
    if b * b >= 2.0 * m * m:
        return 4.0 * b * b
    return 2.0 * b * b + 2.0 * m * m + b ** 4 / (2.0 * m * m)


def statistics_sensitivity(count_weight: float, sum_weight: float, moment_weight: float) -> float:
    """Δ = sup ‖v(z) − v(z')‖₂ over records in the unit ball and labels of the class domain.

    * Same label: :func:`same_label_sensitivity_squared` (4b² when b² ≥ 2m²).
    * Different labels: the two contributions sit in different class blocks, so
      ‖v(z) − v(z')‖² = ‖v(z)‖² + ‖v(z')‖² = 2a² + b²(r² + s²) + m²(r⁴ + s⁴) ≤ 2a² + 2b² + 2m², attained
      at ‖x‖ = ‖x'‖ = 1.

    Δ² is the larger of the two, and the bound is attained. With b² ≥ 2m² and a² + m² ≤ b², counts and
    second moments cost nothing beyond the sums: Δ = 2b (the defaults a = 0.8, b = 1, m = 0.6 sit
    there).

    **The pooled layout** (one second moment for all classes: v(z) = [a·e_y, b·x⊗e_y, m·vech(xxᵀ)], the
    moment outside the class blocks) has the **same** Δ:

    * Same label: the count cancels and the sum and moment differences are those of the per-class layout,
      b²‖x − x'‖² + m²‖xxᵀ − x'x'ᵀ‖²_F: the same supremum, :func:`same_label_sensitivity_squared`.
    * Different labels: the counts give 2a², the sums sit in different blocks, b²(r² + s²), and the moments
      now share one block: m²‖xxᵀ − x'x'ᵀ‖²_F = m²(r⁴ + s⁴ − 2r²s²γ²) ≤ m²(r⁴ + s⁴). So
      ‖v(z) − v(z')‖² ≤ 2a² + b²(r² + s²) + m²(r⁴ + s⁴) ≤ 2a² + 2b² + 2m², attained at ‖x‖ = ‖x'‖ = 1 with
      x ⊥ x' (d ≥ 2; for d = 1 the supremum is smaller and the bound still holds).

    Both cases give the per-class layout's bounds, so Δ is the same for both layouts; the pooled one adds
    one noise draw to the pooled moment where the per-class one adds C (one per class) to their sum.
    ``tests/test_classifier.py`` checks the pooled layout against sampled and adversarially optimised pairs.

    Parameters
    ----------
    count_weight, sum_weight, moment_weight : float
        The public weights a, b, m ≥ 0 (not all zero).

    Returns
    -------
    float
        Δ > 0.

    Examples
    --------
    >>> statistics_sensitivity(0.8, 1.0, 0.6)
    2.0
    >>> round(statistics_sensitivity(1.0, 1.0, 1.0), 6)   # 2 + 2 + 2 = 6 > 4.5
    2.44949
    """
    a = _weight(count_weight, "count_weight")
    b = _weight(sum_weight, "sum_weight")
    m = _weight(moment_weight, "moment_weight")
    if a == 0.0 and b == 0.0 and m == 0.0:
        raise ValueError("the weights (count, sum, moment) must not all be zero")
    change = 2.0 * a * a + 2.0 * b * b + 2.0 * m * m
    same = same_label_sensitivity_squared(b, m) if (b > 0.0 or m > 0.0) else 0.0
    return check_positive(math.sqrt(max(change, same)), "sensitivity")
