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

import math

from ..privacy.conversions import eps_from_rho


class Lineage:
    """Read-only views of the members' accountants (ρ numbers, no records), so the ρ of a member that
    was garbage-collected still counts: its releases were public.

    Examples
    --------
    >>> import onpair
    >>> lineage = Lineage()
    >>> lineage.add(onpair.PairwiseGIGA(bounds=(0, 1), n_features=2))
    >>> lineage.report()
    {'members': 1, 'non_private_members': 1, 'rho_spent': 0.0}
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

    def report(self, delta=None, accounting=None) -> dict:
        rho = math.fsum(a.rho_spent for a in self.accountants)
        out = {"members": self.n_members, "non_private_members": self.n_non_private, "rho_spent": rho}
        if delta is not None:
            out["delta"] = delta
            out["epsilon_spent"] = float(eps_from_rho(rho, delta, method=accounting)) if rho > 0 else 0.0
        return out
