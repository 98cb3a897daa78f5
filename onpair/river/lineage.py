"""The budget record shared by a river model, its clones and their copies (report only).

``clone()`` in river means "same parameters, no data": for a private model that is a **new mechanism
with its own budget**. So that clones made for you (river's ensembles and model selection,
``check_estimator``) never go unnoticed, a model, its clones, their clones and their copies share one
lineage, whose report adds up the ρ they spent: the guarantee for a record that all of them saw.

**What the total assumes.** Each member's ρ is the cost of a record it learned **once** (one stream
position), and zCDP costs add over members. A member that learned the record at k positions costs its
``privacy_report(passes=k)["record_level"]["rho"]`` instead. River's bagging learns each record
k ~ Poisson(1) times per member, with no upper bound: the lineage total does not cover it (no finite ε
does), and neither does anything else here.
"""

from __future__ import annotations

from ..privacy.reports import spent


class Lineage:
    """Read-only views of the members' accountants (their events: ρ numbers, no records), so the ρ of a
    member that was garbage-collected still counts: its releases were public.

    Examples
    --------
    >>> import onpair
    >>> lineage = Lineage()
    >>> lineage.add(onpair.PairwiseGIGA(bounds=(0, 1), n_features=2))
    >>> lineage.report(0.0, "none")
    {'members': 1, 'non_private_members': 1, 'delta': 0.0, 'epsilon_spent': inf}
    """

    def __init__(self):
        self.accountants = []
        self.n_members = 0
        self.n_non_private = 0

    def add(self, learner) -> None:
        """Count a member by its onpair learner (the wrapper's inner learner)."""
        self.n_members += 1
        if learner.private:
            self.accountants.append(learner.accountant)
        else:
            self.n_non_private += 1

    def report(self, delta, accounting) -> dict:
        """``members``, ``non_private_members``, ``delta`` and the figures of every total
        (:func:`onpair.privacy.reports.spent`: ``rho_spent`` by the rule for ρ, ``epsilon_spent`` at ``delta``)
        over every member's events. A member that shares an accountant with others (``accountant=``) is
        counted by its own events, once."""
        events = [event for accountant in self.accountants for event in accountant.events]
        out = {"members": self.n_members, "non_private_members": self.n_non_private, "delta": delta}
        out.update(spent(events, delta, accounting, private=self.n_non_private == 0))
        return out
