"""The fast tier's covering subsets (tests/tiers.py): each check on a value, each value on a check, and no more
than that needs (a second value only for a value no other check runs on); by_tier follows the tier."""

import itertools

import pytest

import tiers


def _assert_covers(checks, chosen):
    assert set(chosen) == set(checks)
    for key, values in chosen.items():
        assert values and set(values) <= set(checks[key]) and len(set(values)) == len(values), key
    assert set(itertools.chain(*chosen.values())) == set(itertools.chain(*checks.values()))


@pytest.mark.parametrize("n_checks, n_values", [(1, 1), (1, 5), (5, 1), (3, 7), (7, 3), (42, 8), (8, 42)])
def test_a_full_product_is_covered_by_as_few_pairs_as_the_larger_side(n_checks, n_values):
    checks = {f"check{i}": [f"class{j}" for j in range(n_values)] for i in range(n_checks)}
    chosen = tiers.covering(checks)
    _assert_covers(checks, chosen)
    assert sum(map(len, chosen.values())) == max(n_checks, n_values)
    # a rotation: the values are spread evenly over the checks (no value runs twice before all ran once)
    counts = [sum(v in values for values in chosen.values()) for v in checks["check0"]]
    assert max(counts) - min(counts) <= 1


def test_ragged_products_pool_their_values_and_every_value_still_runs():
    checks = {"learn_one": ["A", "B"], "fit": ["C", "D", "E"], "both": ["A", "C"], "only_F": ["F"]}
    chosen = tiers.covering(checks)
    _assert_covers(checks, chosen)
    assert chosen["only_F"] == ["F"]
    # a check runs on a second value only for a value that no other check runs on
    runs = {v: sum(v in values for values in chosen.values()) for v in "ABCDEF"}
    for values in chosen.values():
        assert sum(runs[v] > 1 for v in values) <= 1, values


def test_the_covering_is_deterministic():
    checks = {f"c{i}": list("abcdefg")[i % 3:] for i in range(9)}
    assert tiers.covering(checks) == tiers.covering(dict(checks))


def test_by_tier_gives_the_size_of_the_tier_the_suite_runs_in(monkeypatch):
    monkeypatch.setattr(tiers, "FAST", True)
    assert tiers.by_tier(fast=1, full=2) == 1
    monkeypatch.setattr(tiers, "FAST", False)
    assert tiers.by_tier(fast=1, full=2) == 2
