"""The task axis of the learners: what the parameter is, how it is noised, checked and shown.

Two tasks share every other part of a learner (kernels aside):

* :class:`AUCTask`, bipartite ranking: the parameter is a vector w ∈ R^d in the ℓ2 ball of radius R,
  labels are ±1, the release noise is N(0, σ²I);
* :class:`MetricTask`, metric learning: the parameter is a symmetric d×d matrix W (kept flat, row
  major, so that its Frobenius norm is the vector's ℓ2 norm) in one of the constraint sets of
  :mod:`onpair.core.matrix_geometry`, followed by the threshold b when it is learned (the set is then
  C × [low, high], the norm ‖(W, b)‖² = ‖W‖²_F + b²); labels are class labels of any type, and the
  release noise is the symmetric noise that makes σ·N the Gaussian mechanism for a Frobenius-norm
  sensitivity (:func:`onpair.core.matrix_geometry.symmetric_noise`), with one more standard normal for b.

A task object is immutable and holds only public settings; :func:`make_task` is the one place that
turns the learners' ``task``/``constraint`` parameters into one.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_label_block, binary_label, class_label, label_array
from .geometry import random_point_in_ball
from .losses import get_loss
from .matrix_geometry import (CONSTRAINTS, as_square_symmetric, constraint_code, constraint_diameter,
                               identity_center, project_matrix_flat, random_symmetric_point, symmetric_noise)
from .metric_losses import PAPER_TERMS, get_metric_loss

TASKS = ("auc", "metric")


class AUCTask:
    """Bipartite ranking: a vector in the ℓ2 ball, ±1 labels, isotropic Gaussian noise.

    Examples
    --------
    >>> task = make_task("auc")
    >>> task.param_size(3), task.diameter(0.1), task.constraint
    (3, 0.2, -1)
    """

    name = "auc"
    #: Kernel code of the constraint set (the AUC kernels project onto the ball themselves).
    constraint = -1
    centers = ("zero",)

    def get_loss(self, loss):
        return get_loss(loss)

    def param_size(self, dim: int) -> int:
        """Entries of the parameter: d."""
        return dim

    def noise_dimension(self, dim: int) -> int:
        """E‖N‖² of :meth:`noise`'s standard rows: d (the noise power of σ·N is σ²·d)."""
        return dim

    def diameter(self, radius: float) -> float:
        """diam(C) = 2R for the ℓ2 ball."""
        return 2.0 * radius

    def visible(self, flat: np.ndarray, dim: int) -> np.ndarray:
        """The parameter as users see it: the vector itself."""
        return flat

    def visible_shape(self, dim: int) -> tuple:
        return (dim,)

    def noise(self, rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
        """``count`` standard normal rows of length d (σ = 1; the kernels scale them)."""
        if count == 0:
            return np.zeros((0, dim))
        return rng.standard_normal((count, dim))

    def random_point(self, rng: np.random.Generator, dim: int, radius: float) -> np.ndarray:
        """A data-independent random point of C (Huai Alg. 1's warm-up, Alg. 2's centre)."""
        return random_point_in_ball(rng, dim, radius)

    def default_center(self, dim: int, radius: float) -> np.ndarray:
        return np.zeros(dim)

    def zero_center(self, dim: int) -> np.ndarray:
        return np.zeros(dim)

    def project(self, flat: np.ndarray, dim: int, radius: float) -> np.ndarray:
        """Π_C of a flat parameter (a new array)."""
        out = np.array(flat, dtype=np.float64, copy=True)
        norm = float(np.linalg.norm(out))
        if norm > radius:
            out *= radius / norm
        return out

    def membership_error(self, flat: np.ndarray, dim: int, radius: float):
        """Why a restored parameter cannot be a point of C, or None (a few ulps of slack for the
        projection's rounding)."""
        if float(np.linalg.norm(flat)) > radius * (1.0 + 1e-9):
            return f"lies outside the ball of radius {radius!r}"
        return None

    def label_block(self, y, n_records: int, stream_offset: int):
        """Validated labels of a block: an int8 array of ±1."""
        return as_label_block(y, n_records, stream_offset, name="y")

    def label_one(self, y, stream_offset: int):
        """One validated label: ±1."""
        return binary_label(y, 0, stream_offset, name="y")

    def single_block(self, label):
        """The block form of one validated label."""
        return np.array([label], dtype=np.int8)

    def settings(self) -> dict:
        return {}


class MetricTask:
    """Metric learning: a symmetric matrix in a constraint set, class labels, symmetric noise.

    Parameters
    ----------
    constraint : int
        Code of the constraint set (:data:`onpair.core.matrix_geometry.CONSTRAINTS`).
    terms : PairTerms, optional
        The threshold (fixed, or learned in [low, high]) and the pair weights
        (:class:`onpair.core.metric_losses.PairTerms`); default the papers' (b = 1, uniform).

    Examples
    --------
    >>> task = make_task("metric", "psd")
    >>> task.param_size(3), round(task.diameter(1.0), 6)
    (9, 1.414214)
    >>> from onpair.core.metric_losses import PairTerms
    >>> learned = make_task("metric", "psd", PairTerms(0.0, 1.0))
    >>> learned.param_size(3), round(learned.diameter(1.0), 6)   # √(2 + 1)
    (10, 1.732051)
    """

    name = "metric"
    centers = ("identity", "zero")

    def __init__(self, constraint: int, terms=PAPER_TERMS):
        self.constraint = int(constraint)
        self.terms = terms

    @property
    def learned(self) -> bool:
        return self.terms.learned

    def _with_threshold(self, matrix: np.ndarray, b=None) -> np.ndarray:
        """A flat matrix, followed by b (default: the middle of its interval) when b is learned."""
        if not self.learned:
            return matrix
        return np.append(matrix, 0.5 * (self.terms.low + self.terms.high) if b is None else b)

    def threshold(self, flat: np.ndarray, dim: int) -> float:
        """The threshold b of a parameter: its last entry when learned, else the fixed value."""
        return float(flat[dim * dim]) if self.learned else float(self.terms.low)

    def get_loss(self, loss):
        return get_metric_loss(loss)

    def param_size(self, dim: int) -> int:
        """Entries of the parameter: d² (a flat symmetric matrix), and b when learned."""
        return dim * dim + (1 if self.learned else 0)

    def noise_dimension(self, dim: int) -> int:
        """E‖N‖² of :meth:`noise`'s standard rows: d(d + 1)/2 (the symmetric matrices' coordinates), + 1 for b."""
        return dim * (dim + 1) // 2 + (1 if self.learned else 0)

    def diameter(self, radius: float) -> float:
        """The diameter of the set: of C in the Frobenius norm, of C × [low, high] with a learned b."""
        matrix = constraint_diameter(self.constraint, radius)
        if not self.learned:
            return matrix
        return math.hypot(matrix, self.terms.high - self.terms.low)

    def visible(self, flat: np.ndarray, dim: int) -> np.ndarray:
        """The parameter as users see it: the d×d matrix (b: :meth:`threshold`)."""
        return flat[:dim * dim].reshape(dim, dim)

    def visible_shape(self, dim: int) -> tuple:
        return (dim, dim)

    def noise(self, rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
        """``count`` standard symmetric noise matrices as flat rows (isotropic in the Frobenius norm)."""
        if count == 0:
            return np.zeros((0, self.param_size(dim)))
        if not self.learned:
            return symmetric_noise(rng, count, dim)
        # (W, b): each release draws its d² + 1 standard normals consecutively, so that a block of k
        # releases uses the random stream exactly as k single releases do (learn_one = learn_many).
        # W's part is symmetrised as in symmetric_noise; b's is one more standard normal coordinate,
        # so the whole is isotropic in ‖(W, b)‖.
        Z = rng.standard_normal((count, dim * dim + 1))
        square = Z[:, :dim * dim].reshape(count, dim, dim)
        noise = np.empty((count, dim * dim + 1))
        noise[:, :dim * dim] = (0.5 * (square + np.transpose(square, (0, 2, 1)))).reshape(count, dim * dim)
        noise[:, dim * dim] = Z[:, dim * dim]
        return noise

    def random_point(self, rng: np.random.Generator, dim: int, radius: float) -> np.ndarray:
        matrix = random_symmetric_point(rng, dim, radius, self.constraint)
        return self._with_threshold(matrix, rng.uniform(self.terms.low, self.terms.high) if self.learned else None)

    def default_center(self, dim: int, radius: float) -> np.ndarray:
        """The scaled identity, and b₀ the middle of b's interval when b is learned."""
        return self._with_threshold(identity_center(dim, radius, self.constraint))

    def zero_center(self, dim: int) -> np.ndarray:
        """W₀ = 0 (the paper's centre), b₀ the middle of b's interval when b is learned."""
        return self._with_threshold(np.zeros(dim * dim))

    def given_center(self, matrix_flat: np.ndarray, dim: int, radius: float) -> np.ndarray:
        """A public W₀ (flat, already checked inside C), with b₀ the middle of its interval if learned."""
        return self._with_threshold(matrix_flat)

    def project(self, flat: np.ndarray, dim: int, radius: float) -> np.ndarray:
        """Π onto C (× [low, high] with a learned b): a new array."""
        p = dim * dim
        matrix = project_matrix_flat(flat[:p], dim, radius, self.constraint)
        if not self.learned:
            return matrix
        return np.append(matrix, min(max(float(flat[p]), self.terms.low), self.terms.high))

    def membership_error(self, flat: np.ndarray, dim: int, radius: float):
        """Why a restored parameter cannot be a point of C, or None: it must lie in the Frobenius ball
        (the loss constants assume |h| ≤ 4R), be symmetric, and be what the projection can produce."""
        if self.learned:
            b = float(flat[dim * dim])
            if not self.terms.low <= b <= self.terms.high:
                return f"has a threshold {b!r} outside [{self.terms.low!r}, {self.terms.high!r}]"
            flat = flat[:dim * dim]
        if float(np.linalg.norm(flat)) > radius * (1.0 + 1e-9):
            return f"lies outside the ball of radius {radius!r}"
        matrix = flat.reshape(dim, dim)
        if not np.array_equal(matrix, matrix.T):
            return "is not a symmetric matrix"
        projected = project_matrix_flat(flat, dim, radius, self.constraint)
        if float(np.linalg.norm(projected - flat)) > 1e-9 * radius:
            return "lies outside the constraint set"
        return None

    def label_block(self, y, n_records: int, stream_offset: int) -> list:
        """Validated class labels of a block, in canonical form (int or str)."""
        values = label_array(y, "y")
        if values.shape[0] != n_records:
            raise ValueError(f"X has {n_records} records but y has {values.shape[0]} labels")
        return [class_label(v, i, stream_offset, name="y") for i, v in enumerate(values)]

    def label_one(self, y, stream_offset: int):
        return class_label(y, 0, stream_offset, name="y")

    def single_block(self, label) -> list:
        return [label]

    def settings(self) -> dict:
        settings = {"task": "metric", "constraint": self.constraint}
        if self.terms != PAPER_TERMS:  # the papers' terms add nothing: files written before them still match
            settings.update(threshold=[self.terms.low, self.terms.high],
                            pair_weights=[self.terms.same_weight, self.terms.different_weight])
        return settings


class ClassifyTask:
    """Classification over a public class domain (the statistics family's ``task="classify"``): class labels
    checked as the metric task's (any number of classes, of type int, str or bool); the model is
    post-processing of released class statistics, so there is no parameter geometry here.

    Examples
    --------
    >>> CLASSIFY.label_one("a", 0), CLASSIFY.single_block(2)
    ('a', [2])
    """

    name = "classify"
    label_block = MetricTask.label_block
    label_one = MetricTask.label_one
    single_block = MetricTask.single_block

    def settings(self) -> dict:
        return {"task": "classify"}


AUC = AUCTask()
CLASSIFY = ClassifyTask()


def make_task(task="auc", constraint=None, terms=None):
    """The task object for the learners' ``task`` and ``constraint`` parameters.

    Raises
    ------
    ValueError
        For an unknown task or constraint, or a constraint given with the AUC task.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if task == "metric":
        return MetricTask(constraint_code("frobenius" if constraint is None else constraint),
                          PAPER_TERMS if terms is None else terms)
    if constraint not in (None, "l2"):
        raise ValueError(f"constraint={constraint!r} is for task='metric' (one of {sorted(CONSTRAINTS)}); "
                         "the AUC task's constraint set is the l2 ball")
    return AUC


def given_center(center, name: str = "center") -> np.ndarray:
    """A public starting metric W₀ given as a matrix: a square, symmetric, finite copy."""
    return as_square_symmetric(center, name=name)
