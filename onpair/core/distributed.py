"""Private offline fits on data that stay in a Dask cluster: the work per partition runs on the workers,
every noise draw on the client.

``OffPairStats().fit(X, y)`` and ``GradientPerturbedGD().fit(X, y)`` with ``X`` a Dask array or Dask
DataFrame (``y`` a Dask array or Series of the same partitions) come here, as does :func:`fit` with an
explicit ``distributed.Client``.

**The protocol** (:class:`PartitionedFit`). An estimator has a distributed fit when it implements three
public members: ``partition_layout`` (``"records"``: each partition keeps its mapped records and class
codes; ``"split"``: its positives and its negatives), ``check_partitioned_fit()`` (every parameter
checked before any task is submitted) and ``fit_partitions(partitions, seed_sequence) -> (coef,
report)``, which asks :class:`DaskPartitions` for exact sums (:meth:`DaskPartitions.sum` of a
deterministic function of each partition, or a graph of its own from :meth:`DaskPartitions.task`,
:meth:`DaskPartitions.tree_sum` and :meth:`DaskPartitions.compute`), draws the noise on the client from
``seed_sequence``, and releases. Everything else (the checks of each partition, the public bounds, the
fitted attributes) is the in-process fit's own code (:mod:`onpair.core.fitting`). The fit has three
parts:

1. **Prepare, on the workers.** Each partition is validated (the checks of an in-process fit), mapped by
   the **public** bounds and kept in the workers' memory (``persist``); the client learns only the
   partition's record count and its number of clipped records (curator-only, as ``n_clipped_``). With no
   public ``classes=``, the distinct labels of each partition are collected first, as the in-process fit
   reads them off ``y``.
2. **Exact sums, on the workers; noise, on the client.**

   * :class:`onpair.OffPairStats`: each partition sums its records' statistics v(z)
     (:func:`onpair.statistics._kernels.statistics_total`), a tree of additions (fan-in
     :data:`SPLIT_EVERY`, a fixed order) brings the single total to the client, which draws the one
     Gaussian noise vector and computes the model (docs/algorithms.md#continual-release).
   * :class:`onpair.GradientPerturbedGD`: at each step the client sends θ; partition a computes its
     scores s_a = X⁺_a θ and t_a = X⁻_a θ; the task of partition a pairs its positives with every
     negative score and computes, with the block kernel of :mod:`onpair.batch._kernels`, the pair-weight
     sums A_i = Σ_j ℓ'(s_i − t_j) (all negatives) and a row B_j = Σ_{i∈a} ℓ'(s_i − t_j); a tree adds
     the rows into B; partition a combines its A and its segment of B with its records into
     Σ_i A_i x_i − Σ_j B_j x_j, a d-vector; a tree of additions gives the client the exact gradient sum,
     to which it adds the step's noise (docs/algorithms.md#gradient-perturbation;
     :mod:`onpair.batch.distributed_gradient` builds the graph). Only scores, pair weights (one number
     per record and partition) and d-vectors cross the network, no record as such; but they are exact
     (the noise is added on the client), and a record's scores under d or more linearly independent θ
     determine it: the workers, the scheduler and the network must be trusted like the place where the
     records are kept (docs/distributed.md).
3. **Release, on the client**, by the estimator's own code (the same lines as the in-process fit), then
   every persisted partition and intermediate result is released from the cluster.

**Privacy invariants.** No task that runs on a worker draws a random number or receives a seed: the
functions below are deterministic functions of the records, so a task recomputed after a lost worker
gives the same bits and the released model is the one an undisturbed run gives. The exact sums reach
the client process (the noise is added there) but are neither returned nor kept: the estimator holds
only the release, and the cluster holds nothing of the fit once it returns. A fit that fails or is
cancelled (an invalid partition, a lost scheduler, ``KeyboardInterrupt``) raises before the fitted
attributes are assigned: nothing is released and nothing is spent (an estimator has no budget across
fits; the report describes the last completed release only).

**Equality.** The sums are the same sums as in-process, added in another order (per partition, then a
tree), so the model agrees with the in-process fit up to rounding (tests check 1e-12).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

try:
    import dask
    import dask.array as da
    from dask import delayed
except ImportError as exc:  # pragma: no cover - the extra is installed by `make install`
    raise ImportError("onpair.core.distributed needs Dask: pip install 'onpair[dask]'") from exc

from ._validation import is_dask_collection
from .fitting import (OBSERVED, check_binary, fit_bounds, fit_seeds, label_coding, public_classes, set_fitted,
                           validate_training_data,
                           warn_clipped)

__all__ = ["fit", "PartitionedFit", "DaskPartitions", "Partition", "SPLIT_EVERY"]

#: Fan-in of the tree of additions that brings the partitions' sums to the client.
SPLIT_EVERY = 8


@runtime_checkable
class PartitionedFit(Protocol):
    """What an estimator implements to be fitted on Dask data by :func:`fit` (the module docstring).

    Attributes
    ----------
    partition_layout : {"records", "split"}
        How each partition keeps its records on its worker (:class:`Partition`).
    """

    partition_layout: str

    def check_partitioned_fit(self) -> None:
        """Check every parameter (TypeError, ValueError) before any task is submitted."""

    def fit_partitions(self, partitions: "DaskPartitions", seed_sequence: np.random.SeedSequence) -> tuple:
        """``(coef, report)``: the release from the exact sums ``partitions`` computes, the noise drawn here
        from ``seed_sequence``; nothing is assigned to the estimator."""


def fit(estimator, X, y, *, client=None):
    """Fit ``estimator`` on Dask data: per-partition sums on the workers, the noise on the client.

    Parameters
    ----------
    estimator : PartitionedFit
        An estimator with a distributed fit (:class:`onpair.OffPairStats`,
        :class:`onpair.GradientPerturbedGD`); its parameters are checked before any task is submitted.
    X : dask.array.Array (n, d) or dask.dataframe.DataFrame
        The records, partitioned by rows (a Dask array's column chunks are merged).
    y : dask.array.Array (n,), dask Series, or a NumPy array (n,)
        The labels; a Dask Series needs ``X``'s partitions (columns of one DataFrame).
    client : distributed.Client, optional
        The cluster. None: the current default client, or without one Dask's local scheduler (threads).

    Returns
    -------
    estimator
        Fitted, as by an in-process ``fit`` on the same records (up to the summation order).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from onpair import GradientPerturbedGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(300, 2)); y = (X[:, 0] > 0.5).astype(int)
    >>> est = fit(GradientPerturbedGD(T=3, bounds=(0, 1), random_state=0),
    ...           da.from_array(X, chunks=(100, 2)), da.from_array(y, chunks=100))
    >>> est.coef_.shape, len(est.privacy_report_["releases"])
    ((2,), 3)
    """
    if not isinstance(estimator, PartitionedFit):
        raise TypeError(f"{type(estimator).__name__} has no distributed fit; the estimators with one are "
                        "OffPairStats and GradientPerturbedGD (fit the others on a NumPy array)")
    coding = label_coding(estimator)
    estimator.check_partitioned_fit()  # parameters first: a bad one fails before the cluster does any work
    client = _resolve_client(client)
    blocks, labels, dim = _row_blocks(X, y)
    bounds = fit_bounds(estimator, dim)
    partitions = DaskPartitions(blocks, labels, dim, bounds=bounds, coding=coding,
                                classes=getattr(estimator, "classes", None), client=client,
                                split=estimator.partition_layout == "split")
    try:
        warn_clipped(bounds, partitions.n_clipped, stacklevel=3)
        coef, report = estimator.fit_partitions(partitions, fit_seeds(estimator))
        classes = partitions.classes
    finally:
        partitions.close()
    return set_fitted(estimator, coef, report, classes, dim, bounds, partitions.n_clipped)


def _resolve_client(client):
    if client is not None:
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client: Dask's local scheduler
        return None


def _row_blocks(X, y):
    """``(record blocks, label blocks, d)``: lists of Delayed objects, one per partition, in order."""
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame) and isinstance(y, dd.Series) and X.npartitions == y.npartitions:
        return list(X.to_delayed()), list(y.to_delayed()), len(X.columns)
    if isinstance(X, (dd.DataFrame, dd.Series)):
        X = X.to_dask_array(lengths=True)
    elif not is_dask_collection(X):
        X = np.asarray(X)
        rows = _label_array(y).chunks[0] if is_dask_collection(y) else X.shape[0]
        X = da.from_array(X, chunks=(rows,) + X.shape[1:])
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a Dask array or DataFrame, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (records × features), got shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    X = X.rechunk({1: -1})
    y = _label_array(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} records but y has {y.shape[0]} labels")
    y = y.rechunk({0: X.chunks[0]})
    return list(X.to_delayed().ravel()), list(y.to_delayed().ravel()), int(X.shape[1])


def _label_array(y):
    import dask.dataframe as dd

    if isinstance(y, (dd.DataFrame, dd.Series)):
        y = y.to_dask_array(lengths=True)
    elif not is_dask_collection(y):
        y = np.asarray(y)
        y = da.from_array(y, chunks=(y.shape[0],) + y.shape[1:])
    if any(np.isnan(c) for c in y.chunks[0]):
        y = y.compute_chunk_sizes()
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    return y


# -- what runs on the workers: deterministic functions of the records, no randomness ----------------
class Partition:
    """One partition's records on its worker, validated and mapped by the public bounds.

    ``layout="records"`` keeps the mapped records ``Z`` and their class codes (the statistics);
    ``layout="split"`` the positives and the negatives, each C-contiguous (gradient descent).
    """

    __slots__ = ("n", "n_clipped", "Z", "codes", "positives", "negatives")

    def __init__(self, n, n_clipped, Z=None, codes=None, positives=None, negatives=None):
        self.n, self.n_clipped = n, n_clipped
        self.Z, self.codes, self.positives, self.negatives = Z, codes, positives, negatives


def _partition_labels(y) -> np.ndarray:
    """The distinct labels of one partition (asked only when no public ``classes=`` was given)."""
    return np.unique(np.asarray(y).reshape(-1))


def _prepare_partition(X, y, index, bounds, coding, classes, split) -> Partition:
    """Validate one partition (the in-process fit's checks; messages name the partition), map it."""
    y = np.asarray(y)
    if X.shape[0] == 0 and y.shape[0] == 0:
        empty = np.empty((0, bounds.n_features or X.shape[1]))
        return Partition(0, 0, empty, np.empty(0, np.int64), empty, empty)
    try:
        X, labels, _ = validate_training_data(X, y, classes=classes, minimum=1, coding=coding)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from None
    Z, clipped = bounds.transform(X)
    n_clipped = int(np.count_nonzero(clipped))
    if split:
        positive = labels > 0
        return Partition(Z.shape[0], n_clipped, positives=np.ascontiguousarray(Z[positive]),
                         negatives=np.ascontiguousarray(Z[~positive]))
    codes = labels.astype(np.int64) if coding != "signs" else (labels > 0).astype(np.int64)
    return Partition(Z.shape[0], n_clipped, Z=np.ascontiguousarray(Z), codes=codes)


def _partition_counts(part: Partition) -> tuple:
    """What the client learns of a partition: (records, clipped records, positives, negatives)."""
    n_pos = -1 if part.positives is None else part.positives.shape[0]
    n_neg = -1 if part.negatives is None else part.negatives.shape[0]
    return part.n, part.n_clipped, n_pos, n_neg


def _add(*terms) -> np.ndarray:
    """One node of the tree of additions, its terms in order."""
    total = np.array(terms[0], dtype=np.float64)
    for term in terms[1:]:
        total += term
    return total


def _tree_sum(items: list):
    """A fixed tree of :func:`_add` nodes (fan-in :data:`SPLIT_EVERY`) over Delayed d-vectors."""
    while len(items) > 1:
        items = [delayed(_add)(*items[i:i + SPLIT_EVERY]) for i in range(0, len(items), SPLIT_EVERY)]
    return items[0]


# -- the client's side ------------------------------------------------------------------------------
class DaskPartitions:
    """The records of a fit, prepared and held on the workers; the exact sums a fit asks for.

    Built by :func:`fit`. ``n``, ``dim``, ``n_clipped``, ``classes`` and :attr:`counts` are what the client
    learns of the data; :meth:`sum` (and a graph of :meth:`task`, :meth:`tree_sum`, :meth:`compute`)
    return exact (unnoised) sums, for the estimator to perturb at once; :meth:`close` releases everything
    the cluster holds for the fit.
    """

    def __init__(self, blocks, labels, dim, *, bounds, coding, classes, client, split):
        self.dim = dim
        self._client = client
        if classes is None or (isinstance(classes, str) and classes == OBSERVED):
            found = self._compute([delayed(_partition_labels)(part) for part in labels])
            classes = np.unique(np.concatenate(found)) if found else np.empty(0)
            if coding == "signs":
                check_binary(classes)
            elif coding == "sorted" and classes.size < 2:
                raise ValueError(f"classification needs at least 2 classes in y, got {classes.tolist()[:5]}")
        # The in-process fit's classes_: the public domain (sorted but for the metric task), or the labels
        # read off y.
        self.classes = public_classes(classes, coding)
        prepared = [delayed(_prepare_partition)(X, y, k, bounds, coding, classes, split)
                    for k, (X, y) in enumerate(zip(blocks, labels))]
        self._parts = client.persist(prepared) if client is not None else list(dask.persist(*prepared))
        try:
            counts = self._compute([delayed(_partition_counts)(p) for p in self._parts])
            if sum(c[0] for c in counts) < 2:
                raise ValueError(f"pairwise learning needs at least 2 records, got n_samples = "
                                 f"{sum(c[0] for c in counts)}")
        except BaseException:
            self.close()  # an invalid partition (or an interruption): nothing stays on the cluster
            raise
        self._counts = counts
        self.n = sum(c[0] for c in counts)
        self.n_clipped = sum(c[1] for c in counts)

    def _compute(self, graph):
        if self._client is None:
            return dask.compute(graph)[0]
        futures = self._client.compute(graph)
        try:
            return self._client.gather(futures)
        finally:
            # Forgotten by the scheduler now, whatever still refers to the futures (a traceback does,
            # when the fit failed or was interrupted): the cluster keeps no result of the fit.
            self._client.cancel(futures)

    @property
    def parts(self) -> list:
        """The prepared partitions on the workers (Dask objects, in partition order), for :meth:`task`."""
        return list(self._parts)

    @property
    def counts(self) -> list:
        """Per partition, what the client learns of it: (records, clipped records, positives, negatives),
        −1 for the counts a layout does not split (:func:`_partition_counts`)."""
        return list(self._counts)

    def task(self, function, *args, nout=None):
        """``function(*args)`` as one task of the cluster (a Dask ``Delayed``; ``nout`` for a tuple result).
        ``function`` must be a deterministic function of its arguments: no task draws a random number."""
        return delayed(function, nout=nout)(*args)

    def tree_sum(self, items: list):
        """The sum of Delayed arrays ``items`` by a fixed tree of additions (fan-in :data:`SPLIT_EVERY`)."""
        return _tree_sum(items)

    def compute(self, graph):
        """Run ``graph`` (Delayed objects) on the cluster and bring its result here; the cluster forgets it."""
        return self._compute(graph)

    def sum(self, function, *args) -> np.ndarray:
        """Σ over partitions of ``function(partition, *args)`` (an array, computed on the partition's
        worker), added by a tree of additions: the exact sum, for the estimator to perturb at once."""
        return self._compute(_tree_sum([delayed(function)(part, *args) for part in self._parts]))

    def close(self) -> None:
        """Release the persisted partitions from the cluster (also after a failed or interrupted fit)."""
        parts, self._parts = self._parts, []
        if self._client is not None and parts:
            from distributed import futures_of

            self._client.cancel(futures_of(parts))
