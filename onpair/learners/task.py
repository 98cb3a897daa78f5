"""The task axis of the learners: what the parameter is, how it is noised, checked and shown.

Two tasks share every other part of a learner (kernels aside):

* :class:`AUCTask`, bipartite ranking: the parameter is a vector w ∈ R^d in the ℓ2 ball of radius R,
  labels are ±1, the release noise is N(0, σ²I);
* :class:`MetricTask`, metric learning: the parameter is a symmetric d×d matrix W (kept flat, row
  major, so that its Frobenius norm is the vector's ℓ2 norm) in one of the constraint sets of
  :mod:`onpair.matrix_geometry`, labels are class labels of any type, and the release noise is the
  symmetric noise that makes σ·N the Gaussian mechanism for a Frobenius-norm sensitivity
  (:func:`onpair.matrix_geometry.symmetric_noise`).

A task object is immutable and holds only public settings; :func:`make_task` is the one place that
turns the learners' ``task``/``constraint`` parameters into one.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_label_block, binary_label, class_label, label_array
from ..geometry import random_point_in_ball
from ..losses import get_loss
from ..matrix_geometry import (CONSTRAINTS, as_square_symmetric, constraint_code, constraint_diameter,
                               identity_center, project_matrix_flat, random_symmetric_point, symmetric_noise)
from ..metric_losses import PAPER_TERMS, get_metric_loss

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
        Code of the constraint set (:data:`onpair.matrix_geometry.CONSTRAINTS`).

    Examples
    --------
    >>> task = make_task("metric", "psd")
    >>> task.param_size(3), round(task.diameter(1.0), 6)
    (9, 1.414214)
    """

    name = "metric"
    centers = ("identity", "zero")
    #: The threshold and pair weights of the losses. The online learners use the papers' losses (fixed
    #: b = 1, uniform weights); the learned threshold and public pair weights are in
    #: :class:`onpair.estimators.GradientPerturbedGD` so far (docs/algorithms.md#metric-threshold).
    terms = PAPER_TERMS

    def __init__(self, constraint: int):
        self.constraint = int(constraint)

    def get_loss(self, loss):
        return get_metric_loss(loss)

    def param_size(self, dim: int) -> int:
        """Entries of the parameter: d² (a flat symmetric matrix)."""
        return dim * dim

    def diameter(self, radius: float) -> float:
        """The Frobenius diameter of the constraint set."""
        return constraint_diameter(self.constraint, radius)

    def visible(self, flat: np.ndarray, dim: int) -> np.ndarray:
        """The parameter as users see it: the d×d matrix."""
        return flat.reshape(dim, dim)

    def visible_shape(self, dim: int) -> tuple:
        return (dim, dim)

    def noise(self, rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
        """``count`` standard symmetric noise matrices as flat rows (isotropic in the Frobenius norm)."""
        if count == 0:
            return np.zeros((0, dim * dim))
        return symmetric_noise(rng, count, dim)

    def random_point(self, rng: np.random.Generator, dim: int, radius: float) -> np.ndarray:
        return random_symmetric_point(rng, dim, radius, self.constraint)

    def default_center(self, dim: int, radius: float) -> np.ndarray:
        return identity_center(dim, radius, self.constraint)

    def project(self, flat: np.ndarray, dim: int, radius: float) -> np.ndarray:
        return project_matrix_flat(flat, dim, radius, self.constraint)

    def membership_error(self, flat: np.ndarray, dim: int, radius: float):
        """Why a restored parameter cannot be a point of C, or None: it must lie in the Frobenius ball
        (the loss constants assume |h| ≤ 4R), be symmetric, and be what the projection can produce."""
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
        return {"task": "metric", "constraint": self.constraint}


AUC = AUCTask()


def make_task(task="auc", constraint=None):
    """The task object for the learners' ``task`` and ``constraint`` parameters.

    Raises
    ------
    ValueError
        For an unknown task or constraint, or a constraint given with the AUC task.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if task == "metric":
        return MetricTask(constraint_code("frobenius" if constraint is None else constraint))
    if constraint not in (None, "l2"):
        raise ValueError(f"constraint={constraint!r} is for task='metric' (one of {sorted(CONSTRAINTS)}); "
                         "the AUC task's constraint set is the l2 ball")
    return AUC


def given_center(center, name: str = "center") -> np.ndarray:
    """A public starting metric W₀ given as a matrix: a square, symmetric, finite copy."""
    return as_square_symmetric(center, name=name)
