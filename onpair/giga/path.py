"""One pass of Pairwise GIGA over mapped records: the path every learner and estimator takes.

``learn_one``/``learn_many`` of the online learners and ``fit`` of the offline estimators built on them
(:class:`onpair.OffPairStrC`, :class:`onpair.OffPairC`) all end here, as scikit-learn's linear models
end in ``sklearn.linear_model._sgd_fast._plain_sgd``: the state objects (a :class:`~onpair.giga.pair_history.PairHistory`, an
:class:`~onpair.giga.iterate.Iterate`) go in, the compiled kernel of the history's kind runs the
rounds, and the models the plan releases come out.
"""

from __future__ import annotations

import numpy as np

from .release import ReleasePlan


def giga_path(Z, labels, *, history, iterate, objective, steps, t_start=0, plan=None, noise=None, rng=None):
    """Rounds t_start+1 … t_start+m of Pairwise GIGA over the mapped block ``Z``.

    Parameters
    ----------
    Z : ndarray of float64, shape (m, d)
        Records already mapped onto the diameter-2 domain by the public bounds.
    labels : ndarray of int8, shape (m,), or (codes, classes)
        ±1 labels (AUC), or for the metric task the int64 class codes with the class map to commit
        (:meth:`AugmentedRows.encode`).
    history : PairHistory
        The stored past; updated in place.
    iterate : Iterate
        w, w₀ and Σw; updated in place.
    objective : RoundObjective
        λ, R, the loss and the task.
    steps : ndarray of float64, shape (m,)
        η of each round.
    t_start : int, default 0
        Rounds already run.
    plan : ReleasePlan, optional
        Which rounds release (default: none).
    noise : ndarray of float64, shape (k, p), optional
        Standard noise of the k releases, drawn by the caller from its own generator.
    rng : numpy.random.Generator, optional
        Public randomness of a reservoir buffer's slots.

    Returns
    -------
    ndarray of float64, shape (k, p)
        The released models ``Π_C[w_{t_k} + σ_k·noise[k]]``.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair.core.task import make_task
    >>> from onpair.giga.round_objective import RoundObjective, StepRule
    >>> from onpair.giga.slots import SlotPolicy
    >>> from onpair.giga.histories import make_history
    >>> from onpair.giga.iterate import Iterate
    >>> task = make_task("auc")
    >>> objective = RoundObjective(task, task.get_loss("logistic"), lam=1.0, radius=1.0)
    >>> Z = np.array([[0.5, 0.0], [-0.5, 0.0], [0.4, 0.1]]); y = np.array([1, -1, 1], dtype=np.int8)
    >>> iterate = Iterate(np.zeros(2), np.zeros(2))
    >>> history = make_history(task, objective.loss, SlotPolicy("all"), 2)
    >>> released = giga_path(Z, y, history=history, iterate=iterate, objective=objective,
    ...                      steps=StepRule(objective).block(0, 3))
    >>> released.shape, bool(iterate.w[0] > 0), history.n_stored
    ((0, 2), True, 3)
    """
    m = Z.shape[0]
    if plan is None:
        plan = ReleasePlan.nothing(m)
    size = iterate.w.shape[0]
    if noise is None:
        noise = np.zeros((plan.n_releases, size))
    released = np.zeros((plan.n_releases, size))
    history.learn_block(Z, labels, iterate, objective, steps, t_start, plan, noise, released, rng)
    return released
