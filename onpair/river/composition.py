"""One record-level total for a river pipeline of onpair models (zCDP budgets add; nobody adds them by hand).

``PrivateStandardScaler(...) | PrivatePairwiseClassifier(...)`` spends two budgets on every record: the
scaler's release, then the classifier's on records mapped through that release (a public map once the
release is made, so the classifier's own analysis holds; adaptive composition). In zCDP the costs add,
ρ = ρ_scaler + ρ_classifier, also for a record learned ``passes`` times (each model's ``record_level``).
:func:`pipeline_report` walks a pipeline (nested pipelines and ``TransformerUnion`` included), asks every
onpair model for its record-level cost, and converts the sum once.
"""

from __future__ import annotations

from river import base

from ..privacy.events import NonPrivate, ZCDPRelease
from ..privacy.reports import spent
from .classifier import PrivatePairwiseClassifier
from .metric import MetricTransformer
from .scaler import PrivateStandardScaler

__all__ = ["pipeline_report"]

#: The river models of onpair whose reports :func:`pipeline_report` adds up.
ONPAIR_MODELS = (PrivatePairwiseClassifier, MetricTransformer, PrivateStandardScaler)


def _is_onpair(model) -> bool:
    # type(), not isinstance(): a river Pipeline passes isinstance checks for the class of its last step.
    return issubclass(type(model), ONPAIR_MODELS)


def _learns(step) -> bool:
    """Whether a step that is not an onpair model learns from the stream: its ``learn_one`` is not river's
    no-op (``Select``, ``FuncTransformer``, ``Binarizer``, ``FeatureHasher`` keep it; ``StandardScaler``,
    ``OneHotEncoder`` and every river learner override it). Unknown steps count as learning."""
    return getattr(type(step), "learn_one", None) is not base.Transformer.learn_one


def _steps(model, name):
    """(name, step) of every leaf of a river pipeline, ``TransformerUnion`` or single model, in order."""
    children = getattr(model, "steps", None)
    if children is None:
        children = getattr(model, "transformers", None)  # a TransformerUnion
    if _is_onpair(model) or not hasattr(children, "items"):
        yield name, model
        return
    for child_name, child in children.items():
        yield from _steps(child, f"{name}/{child_name}" if name else str(child_name))


def pipeline_report(pipeline, passes=1, order="same", delta=None) -> dict:
    """The record-level privacy cost of every onpair model in a river pipeline, and their total.

    Parameters
    ----------
    pipeline : river ``compose.Pipeline``, ``compose.TransformerUnion`` or a single model
        Walked recursively; onpair's river models (:class:`PrivateStandardScaler`,
        :class:`PrivatePairwiseClassifier`, :class:`MetricTransformer`) are accounted.
    passes, order :
        As for each model's ``privacy_report``: a record learned ``passes`` times, in the same order each
        pass (exact cost) or in any order (the group bound).
    delta : float, optional
        δ of the total's ε; default the smallest δ of the private models (any δ in (0, 1) is valid: the
        total is a zCDP guarantee, converted once).

    Returns
    -------
    dict
        ``members`` (per onpair model: ``step``, ``algorithm``, ``private``, and at the record level ``rho``,
        ``epsilon``, ``delta``, ``accounting``), ``other_steps`` (the names of the steps that are not onpair
        models), ``guarantee`` ("holds", or "void" when some step reads the records without noise),
        ``voided_by`` (the names of those steps: a non-private onpair member, or another step that learns
        from the stream, e.g. river's ``StandardScaler`` or a river model: its state is a function of the
        records, and so is everything computed from it; a stateless step such as ``compose.Select`` voids
        nothing), ``passes``, ``order``, ``rho`` (Σ of the members' record-level ρ; absent when the
        guarantee is void, by the rule for ρ of :mod:`onpair.privacy.reports`), ``delta``, ``accounting``
        ("gaussian" when every member reports with it: a composition of Gaussian mechanisms; "tight"
        otherwise), ``epsilon`` (the figures of :func:`onpair.privacy.reports.spent`, as every report's: ∞
        when the guarantee is void) and ``curator_only`` (empty: every field is a function of the parameters
        and n).

    Examples
    --------
    >>> from river import datasets
    >>> from onpair.river import PrivatePairwiseClassifier, PrivateStandardScaler, pipeline_report
    >>> from streams import PHISHING_FEATURES
    >>> model = (PrivateStandardScaler(bounds=(0.0, 1.0), epsilon=0.5, features=PHISHING_FEATURES, seed=0)
    ...          | PrivatePairwiseClassifier(bounds=(-3.0, 3.0), epsilon=1.0, features=PHISHING_FEATURES, seed=0))
    >>> for x, y in datasets.Phishing().take(100):
    ...     model.learn_one(x, y)
    >>> report = pipeline_report(model)
    >>> [m["step"] for m in report["members"]], round(report["epsilon"], 2)   # ρ add up, ε do not
    (['PrivateStandardScaler', 'PrivatePairwiseClassifier'], 1.15)
    """
    members, others, void = [], [], []
    for name, step in _steps(pipeline, ""):
        if not _is_onpair(step):
            others.append(name or type(step).__name__)
            if _learns(step):
                void.append(others[-1])
            continue
        report = step.privacy_report(passes, order)
        level = report["record_level"]
        member = {"step": name or type(step).__name__, "algorithm": report["algorithm"],
                  "private": bool(report["private"])}
        if "rho" in level:  # the rule for ρ: a non-private member has none
            member["rho"] = level["rho"]
        member.update(epsilon=level["epsilon"], delta=level["delta"], accounting=report["accounting"])
        members.append(member)
        if not member["private"]:
            void.append(member["step"])
    if not members:
        raise ValueError(f"no onpair model in {type(pipeline).__name__}: nothing to account")
    private = [m for m in members if m["private"]]
    if delta is None:
        delta = min((m["delta"] for m in private), default=None)
    accounting = "gaussian" if all(m["accounting"] == "gaussian" for m in private) else "tight"
    # Each member's record-level cost is a zCDP event (a Gaussian mechanism's, replayed); the total goes
    # through the figures every report uses.
    # A step that learns without noise is a non-private mechanism in the composition.
    events = [ZCDPRelease(m["rho"], m["step"]) if m["private"] else NonPrivate(m["step"]) for m in members]
    figures = spent(events, 1e-5 if delta is None else delta, accounting, private=not void)
    out = {"members": members, "other_steps": others, "guarantee": "void" if void else "holds", "voided_by": void,
           "passes": passes, "order": order}
    if "rho_spent" in figures:
        out["rho"] = figures["rho_spent"]
    out.update(delta=delta, accounting=accounting, epsilon=figures["epsilon_spent"], curator_only=[])
    return out
