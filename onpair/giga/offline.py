"""OffPairStrC and OffPairC: offline output perturbation on the online kernel (Huai et al. 2020, Alg. 3, 4).

The data set is streamed once through the same compiled Pairwise GIGA kernel as the online learners,
in a random order drawn from the estimator's own randomness (public, data-independent), and one model
is released: ``Π_C[w_out + N(0, σ² I)]`` with ``w_out`` the average of the iterates (the paper's w̃) or
the last iterate.

Sensitivity (library mode): from the ledger (:mod:`onpair.privacy.ledger`), which holds for the step
sizes actually used. For the last iterate it is ``U_n``; for the average ``(1/n) Σ_t U_t`` (a sum of
per-round worst cases bounds the worst case of the sum). The noise is the analytic Gaussian mechanism
(Balle & Wang 2018), exact for one release at every ε. Paper mode reproduces Alg. 3 literally: T₁
random warm-up points, η_t = 2(t−1)/((t−2)αt), σ² = 128G² log²n · log(1.25/δ)/(α²n²ε²).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..core._validation import check_in_range, check_radius
from ..core.estimator import PairwiseEstimator, fit_report, perturbed
from ..core.fitting import count_classes
from ..core.metric_losses import PAPER_TERMS, make_pair_terms
from ..core.task import make_task
from ..privacy.checks import check_delta, check_epsilon
from ..privacy.conversions import rho_from_dp
from ..privacy.events import GaussianRelease
from ..privacy.exceptions import PrivacyWarning
from ..privacy.gaussian import gaussian_sigma
from ..privacy.ledger import sensitivity_ledger
from ..privacy.signal import signal_fields
from .histories import make_history
from .iterate import Iterate
from .path import giga_path
from .round_objective import RoundObjective, StepRule, check_step_sizes, resolve_lam
from .slots import SlotPolicy

OUTPUTS = ("average", "last")
MODES = ("ledger", "paper")


class _OffPair(PairwiseEstimator):
    """Shared fit of OffPairStrC and OffPairC."""

    def _strong_convexity(self, n: int, task) -> float:
        raise NotImplementedError

    def _center(self, rng, dim, task, radius):
        """w₀ of the regulariser: the task's default (origin for AUC, scaled identity for the metric
        task); OffPairC adds Alg. 4's random point."""
        return task.default_center(dim, radius)

    def _check_center(self, task) -> None:
        """The check of the centre's parameter (OffPairC's ``center``), before any randomness is drawn."""

    def _task_axis(self, n_classes=None):
        """The task, with the metric task's threshold and pair weights (``n_classes``: the size of the label
        domain, the public classes or the labels of y taken as public, as everywhere in the estimators)."""
        if not self._metric_task():
            if not (self.threshold == 1.0 and self.pair_weights is None):
                raise ValueError("threshold and pair_weights are for task='metric'")
            return make_task("auc", self.constraint)
        radius = check_radius(self.radius)
        terms = make_pair_terms(self.threshold, self.pair_weights, radius, n_classes)
        if self.mode == "paper" and terms != PAPER_TERMS:
            raise ValueError("mode='paper' is the papers' algorithm with the papers' loss: use threshold=1.0 and "
                             "pair_weights=None, or mode='ledger'")
        return make_task("metric", self.constraint, terms)

    def _paper_lipschitz(self, loss, alpha) -> float:
        raise NotImplementedError

    def _validate_params(self):
        check_epsilon(self.epsilon)  # the same checks as every estimator and learner
        check_delta(self.delta)
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {self.output!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.mode == "paper" and self.output != "average":
            raise ValueError("mode='paper' releases the average iterate (Alg. 3 line 8); use output='average'")
        if not isinstance(self.private, (bool, np.bool_)):
            raise ValueError(f"private must be True or False, got {self.private!r}")
        if not isinstance(self.start_at_center, (bool, np.bool_)):
            raise ValueError(f"start_at_center must be True or False, got {self.start_at_center!r}")

    def _plan(self, n: int, dim: int, n_classes):
        """Every check of a fit of n records of d features (``n_classes``: the size of the label domain) and
        its public plan, from the parameters only: no record is read and no randomness drawn. Returns the
        task, the round objective, the step rule, the n step sizes, paper mode's warm-up T₁ (else None) and the
        release's (sensitivity, σ) (None for the non-private twin): the noise is fixed before any record is
        read."""
        self._validate_params()
        task = self._task_axis(n_classes)
        alpha = self._strong_convexity(n, task)
        loss = task.get_loss(self.loss)
        radius = check_radius(self.radius)
        objective = RoundObjective(task, loss, resolve_lam(alpha, loss, radius), radius)
        given_steps = check_step_sizes(self.step_sizes)
        self._check_center(task)
        warmup = None
        if self.mode == "paper":
            if not loss.smooth:
                raise ValueError(f"loss={loss.name!r} is not smooth: Alg. 3 needs an L-smooth loss")
            L = objective.smoothness
            warmup = int(max(math.ceil(16.0 * L**2 / alpha**2), 7)) if alpha > 0 else n
            rule = StepRule(objective, paper_warmup=warmup)
        elif not loss.smooth:
            raise ValueError(
                f"loss={loss.name!r} is not smooth: the sensitivity ledger needs it; use 'logistic' or "
                "'square' here, or OutputPerturbedSGD for the hinge loss")
        else:
            rule = StepRule(objective, given_steps)
        steps = rule.block(0, n)
        noise = self._release_noise(n, objective, steps) if self.private else None
        return task, objective, steps, warmup, noise

    def _check_params(self, n_records, n_features, classes) -> None:
        """Every check of the fit (:meth:`_plan`) before it draws noise or finds a range."""
        self._plan(n_records, n_features, len(classes))

    def _fit_released(self, Z, signs, seed_sequence):
        n, dim = Z.shape
        # The label domain's size: declared, or (documented) the labels of y taken as public.
        task, objective, steps, warmup, noise = self._plan(n, dim, count_classes(self, signs))
        order_seq, init_seq, noise_seq = seed_sequence.spawn(3)
        init_rng = np.random.Generator(np.random.PCG64(init_seq))
        # A public, data-independent order: the paper streams the data set once in a random order.
        order = np.random.Generator(np.random.PCG64(order_seq)).permutation(n)
        alpha, loss = objective.strong_convexity, objective.loss
        center = self._center(init_rng, dim, task, objective.radius)
        if self.mode == "paper":
            if warmup >= n:
                warnings.warn(
                    f"mode='paper': T₁ = {warmup} ≥ n = {n}: Alg. 3 averages random points only "
                    "(docs/algorithms.md, \"What the papers' constants get wrong\"). Use mode='ledger' for a "
                    "useful model.", PrivacyWarning, stacklevel=4)
            if self.private and self.epsilon >= 1.0:
                warnings.warn(
                    f"mode='paper' with epsilon = {self.epsilon}: Alg. 3's σ is the classic Gaussian "
                    "mechanism, proven for ε < 1 only; privacy_report_['epsilon_spent'] gives what this σ "
                    "really achieves (it exceeds ε for ε ≳ 8).", PrivacyWarning, stacklevel=4)
            warm_points = [task.random_point(init_rng, dim, objective.radius) for _ in range(min(warmup, n))]
            start = warm_points[-1]  # w_{T₁}: the last random warm-up point
        else:
            start = center if self.start_at_center else task.zero_center(dim)
        if self.private:
            sensitivity, sigma = noise
        iterate = Iterate(start, center)
        history = make_history(task, loss, SlotPolicy("all"), dim)
        labels = (signs[order], {}) if task.name == "metric" else signs[order]  # metric: class codes as given
        giga_path(Z[order], labels, history=history, iterate=iterate, objective=objective, steps=steps)
        if self.mode == "paper":
            # w̃ = (w₁ + … + w_n)/n with w₁ … w_{T₁} the random warm-up points (the kernel held w_{T₁}).
            held = min(warmup, n)
            w_out = (iterate.iterate_sum - held * warm_points[-1] + np.sum(warm_points, axis=0)) / n
        elif self.output == "average":
            w_out = iterate.iterate_sum / n
        else:
            w_out = iterate.w.copy()
        if not self.private:
            return w_out, fit_report(self, (), n=n, mode=self.mode, public={"output": self.output})
        noise_rng = np.random.Generator(np.random.PCG64(noise_seq))
        coef = perturbed(w_out, sigma, noise_rng, dim, float(self.radius),
                         task.constraint if task.name == "metric" else None,
                         task.terms if task.name == "metric" else None)
        rho_budget = rho_from_dp(self.epsilon, self.delta, method="gaussian")
        rho = sensitivity**2 / (2.0 * sigma**2) if sigma > 0 else 0.0
        if self.mode != "paper":
            # σ is the analytic-Gaussian σ for (ε, δ), so Δ²/(2σ²) is the budget up to the rounding of
            # two root finders (a few ulps either way): report it capped at the budget it was calibrated
            # to. Paper mode's σ is the classic mechanism's: its ρ is reported as it is, so that
            # epsilon_spent says what that σ really gives (more than ε for large ε).
            rho = min(rho, rho_budget)
        event = GaussianRelease(sensitivity=sensitivity, sigma=sigma, round=n, rho=rho,
                                what="the average of the iterates" if self.output == "average" else "the last iterate")
        return coef, fit_report(self, [event], n=n, mode=self.mode, rho_budget=rho_budget,
                                public={"output": self.output, "strong_convexity": alpha,
                                        **signal_fields(coef, sigma**2 * task.noise_dimension(dim))})

    def _release_noise(self, n, objective, steps):
        """(sensitivity, σ) of the one release, from n and the public parameters only."""
        alpha = objective.strong_convexity
        if self.mode == "paper":
            G = self._paper_lipschitz(objective.loss, alpha)
            sensitivity = 8.0 * G * math.log(n) / (alpha * n)
            # σ² = 128G² log²n log(1.25/δ)/(α²n²ε²) as printed: the classic mechanism, proven for ε < 1
            # only; epsilon_spent in the report says what this σ really gives (exact Gaussian curve).
            sigma = math.sqrt(2.0 * math.log(1.25 / self.delta)) * sensitivity / self.epsilon
            return sensitivity, sigma
        ledger = sensitivity_ledger(steps, objective.lipschitz, objective.smoothness, alpha, objective.diameter,
                                    pair_change=objective.pair_change)
        sensitivity = float(np.mean(ledger)) if self.output == "average" else float(ledger[-1])
        sensitivity = min(sensitivity, objective.diameter)
        return sensitivity, gaussian_sigma(sensitivity, self.epsilon, self.delta, method="analytic")


_COMMON_DOC = """
    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        (ε, δ)-DP of the released ``coef_`` (one release per ``fit``).
    loss : {"logistic", "square"}, default "logistic"
        Smooth pairwise loss (:mod:`onpair.core.losses`).
    radius : float, default 0.1
        Radius R of the constraint set.
    task : {"auc", "metric"}, default "auc"
        Bipartite ranking (``coef_`` a vector, labels with two classes) or metric learning (``coef_`` a
        symmetric d×d matrix W, any number of classes; :meth:`transform` maps records into the released
        metric's space, ``score`` is leave-one-out 3-NN accuracy). The metric task pulls W towards a
        scaled identity (the origin for AUC), and adds symmetric noise isotropic in the Frobenius norm.
    constraint : {"frobenius", "psd", "nuclear", "psd_nuclear"}, optional
        Constraint set of the metric task (:mod:`onpair.core.matrix_geometry`); default "frobenius".
    step_sizes : "capped" or array-like
        As for the online learners; ignored (Alg. 3's η_t) in paper mode.
    output : {"last", "average"}, default "last"
        Release the last iterate (sensitivity U_n from the ledger) or the average of the iterates (the
        paper's w̃, sensitivity (1/n)Σ_t U_t, several times larger: the early iterates are sensitive).
    bounds, norm_bound : public feature bounds (see :class:`onpair.core.bounds.FeatureBounds`): one of them is required
        (no default; a ValueError says where public bounds come from).
    mode : {"ledger", "paper"}, default "ledger"
    private : bool, default True
        False gives the non-private twin (same order, same kernel, no noise).
    start_at_center : bool, default True
        Start the iterate at the regulariser's centre (the origin unless OffPairC's centre is random).
    classes : sequence of labels, optional
        The **public** label domain: for the AUC task two labels (``classes_``, sorted: ``classes_[1]`` is
        positive); for the
        metric task all class labels. Recommended: without it the classes are read off ``y``, so which
        label values occur must itself be public (as the bounds are); a record with a label outside
        ``classes`` is an error, and a data set in which only one class occurs can be fitted.
    threshold : float, "learned" or (low, high), default 1.0
        Metric task: the losses' threshold b (1.0: the papers' losses; "learned": b learned with W in
        [0, 4R], ``threshold_`` after ``fit``; docs/algorithms.md#metric-threshold). Ledger mode only.
    pair_weights : None, "balanced" or (same, different), default None
        Metric task: weights of the pairs of one class and of two classes (None: uniform, the papers';
        "balanced": equal totals if the public classes had equal sizes). Ledger mode only.
    random_state : int, SeedSequence, Generator or None
        Order, start and noise come from independent children of one SeedSequence. None: fresh OS
        entropy (a seed is for reproducible experiments only).
    discover_bounds : bool, int or dict, default False
        Find the data's box privately inside the declared (loose) box first, with a share of (ε, δ)
        (:func:`onpair.core.fitting.discovered_fit`; values as for :class:`onpair.OffPairStats`).
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`; e.g. every fit of a grid
        search): each fit charges it its release event, and is refused (``PrivacyBudgetExceeded``, the
        estimator unchanged) when the budget cannot pay. scikit-learn's ``clone`` shares it. Each fit
        charged to it draws noise of its own, even with a fixed ``random_state``
        (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).
"""


class OffPairStrC(_OffPair, algorithm="offpairstrc"):
    __doc__ = """Offline (ε, δ)-DP pairwise learner for λ-strongly convex objectives (Huai et al. Alg. 3).

    Streams the data once through Pairwise GIGA on ``ℓ + (λ/2)‖w‖²`` (``(λ/2)‖W − W₀‖²`` with the scaled
    identity W₀ for the metric task) in a random order and releases one noisy model. ``lam="auto"`` is G(R)/R, as for :class:`onpair.OnPairStrC`.
    """ + _COMMON_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from onpair import OffPairStrC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(400, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> est = OffPairStrC(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9, est.coef_.shape
    (True, (3,))
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="logistic", lam="auto", radius=0.1,
                 step_sizes="capped", output="last", bounds=None, norm_bound=None, mode="ledger",
                 private=True, start_at_center=True, task="auc", constraint=None, classes=None, threshold=1.0,
                 pair_weights=None, random_state=None, accountant=None, discover_bounds=False):
        self._store_params(locals())

    def _strong_convexity(self, n, task):
        # Resolved exactly as the online learners do ("auto" = G(R)/R, with the metric task's terms).
        lam = resolve_lam(self.lam, task.get_loss(self.loss), check_radius(self.radius), getattr(task, "terms", None))
        if lam <= 0:
            raise ValueError(f"lam must be > 0 (strong convexity), got {self.lam!r}")
        return lam

    def _paper_lipschitz(self, loss, alpha):
        return loss.lipschitz(self.radius) + alpha * self.radius


class OffPairC(_OffPair, algorithm="offpairc"):
    __doc__ = """Offline (ε, δ)-DP pairwise learner for convex losses (Huai et al. Alg. 4).

    Alg. 3 on ``ℓ + (α/2)‖w − w₀‖²`` with α = c/√n. The paper leaves c open (α = O(1/√n)); the default
    c = 750 keeps α near G(R)/R for the default R = 0.1 at n in the thousands (where the ball stops
    binding, see OnPairStrC's ``lam="auto"``); ``center="random"`` is the paper's random w₀.
    """ + _COMMON_DOC + """
    c : float, default 750.0
        α = c/√n.
    center : {"zero", "random", "identity"}, optional
        Default: "zero" for AUC, "identity" (a scaled identity) for the metric task.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import OffPairC
    >>> rng = np.random.default_rng(1)
    >>> X = rng.uniform(0, 1, size=(400, 3)); y = (X[:, 1] > 0.5).astype(int)
    >>> OffPairC(epsilon=1.0, bounds=(0, 1), random_state=1).fit(X, y).score(X, y) > 0.9
    True
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="logistic", c=750.0, center=None, radius=0.1,
                 step_sizes="capped", output="last", bounds=None, norm_bound=None, mode="ledger",
                 private=True, start_at_center=True, task="auc", constraint=None, classes=None, threshold=1.0,
                 pair_weights=None, random_state=None, accountant=None, discover_bounds=False):
        self._store_params(locals())

    def _strong_convexity(self, n, task):
        return check_in_range(self.c, "c", 1e-12, 1e12) / math.sqrt(n)

    def _check_center(self, task) -> None:
        if self.center not in (None, "zero", "random", "identity"):
            raise ValueError(f"center must be None, 'zero', 'random' or 'identity', got {self.center!r}")
        if self.center == "identity" and task.name != "metric":
            raise ValueError("center='identity' is for task='metric'")

    def _center(self, rng, dim, task, radius):
        self._check_center(task)
        if self.center == "random":
            return task.random_point(rng, dim, radius)
        if self.center == "zero":
            return task.zero_center(dim)
        return task.default_center(dim, radius)  # None: the task's default

    def _paper_lipschitz(self, loss, alpha):
        return loss.lipschitz(self.radius) + alpha * 2.0 * self.radius  # G̃ = G + α·diam(ball ⊇ C)
