"""Which report fields are outside the guarantee: the ``curator_only`` list of every privacy report.

A privacy report (``privacy_report()`` of the online learners and the river models, ``privacy_report_`` of
the offline estimators and scalers) mixes two kinds of fields:

* **public** ones: functions of the public inputs (parameters, bounds, the stream length n, the class
  domain) and of what was released (the noisy statistics or models). Showing them costs nothing;
* **curator-only** ones: computed from the private records (or from the noise that was not released)
  without noise. They are for the data curator, and must be removed before a report is published.

Every report lists its curator-only fields by name under the key ``curator_only`` (which is itself public:
it depends on the class and its parameters only, never on the values). :func:`public_report` drops them.
One function, :func:`mark_curator_only`, builds that list for every report, from :data:`CURATOR_ONLY_FIELDS`
and the fields a report adds for its own reasons (e.g. ``features`` when the feature order was read off the
first record).
"""

from __future__ import annotations

__all__ = ["CURATOR_ONLY_FIELDS", "mark_curator_only", "public_report"]

#: Fields that are never a function of the releases and the public inputs (name → why).
CURATOR_ONLY_FIELDS = {
    "n_clipped": "records outside the declared bounds, counted without noise",
    "solver_steps": "Newton steps of the objective-perturbation solver: depend on the records",
    "gradient_norm": "‖∇J‖ at the solver's point (for AMP before the output noise): depends on the records",
    "n_unknown_feature_records": "river records that carried undeclared keys, counted without noise",
    "unknown_features": "the undeclared keys themselves (a one-hot key names a record's value)",
    "n_missing_feature_records": "river records in which a declared key was missing, counted without noise",
}

#: Fields that are curator-only when a river model's feature order was fixed by its first record
#: (``features=None``): the order itself, and the release description whose dimension it sets.
ORDER_FIELDS = ("features", "schedule")


def mark_curator_only(report: dict, extra=()) -> dict:
    """Set ``report["curator_only"]``: the sorted names of its curator-only fields, and return the report.

    A field is listed if it is one of :data:`CURATOR_ONLY_FIELDS`, one of ``extra`` (the report's own
    reasons), or already listed (a report built on another one keeps that one's list). Only fields present
    in the report are listed, whatever their values.

    Examples
    --------
    >>> mark_curator_only({"epsilon_spent": 1.0, "n_clipped": 3})["curator_only"]
    ['n_clipped']
    """
    names = set(report.get("curator_only", ())) | set(CURATOR_ONLY_FIELDS) | set(extra)
    report["curator_only"] = sorted(name for name in names if name in report and name != "curator_only")
    return report


def public_report(report: dict) -> dict:
    """A copy of ``report`` without its curator-only fields (the part that may be published).

    Examples
    --------
    >>> public_report({"epsilon_spent": 1.0, "n_clipped": 3, "curator_only": ["n_clipped"]})
    {'epsilon_spent': 1.0, 'curator_only': ['n_clipped']}
    """
    hidden = set(report.get("curator_only", ()))
    return {key: value for key, value in report.items() if key not in hidden}
