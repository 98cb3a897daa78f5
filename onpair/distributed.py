"""Private offline fits on data that stay in a Dask cluster: the work per partition runs on the workers,
every noise draw on the client.

``OffPairStats().fit(X, y)`` and ``GradientPerturbedGD().fit(X, y)`` with ``X`` a Dask array or Dask
DataFrame (``y`` a Dask array or Series of the same partitions) come here, as does :func:`fit` with an
explicit ``distributed.Client``. The fit has three parts:

1. **Prepare, on the workers.** Each partition is validated (the checks of an in-process fit), mapped by
   the **public** bounds and kept in the workers' memory (``persist``); the client learns only the
   partition's record count and its number of clipped records (curator-only, as ``n_clipped_``). With no
   public ``classes=``, the distinct labels of each partition are collected first, as the in-process fit
   reads them off ``y``.
2. **Exact sums, on the workers; noise, on the client.**

   * :class:`onpair.OffPairStats`: each partition sums its records' statistics v(z)
     (:func:`onpair._statistics_kernels.statistics_total`), a tree of additions (fan-in
     :data:`SPLIT_EVERY`, a fixed order) brings the single total to the client, which draws the one
     Gaussian noise vector and computes the model (docs/algorithms.md#continual-release).
   * :class:`onpair.GradientPerturbedGD`: at each step the client sends θ; partition a computes its
     scores s_a = X⁺_a θ and t_a = X⁻_a θ; the task of partition a pairs its positives with every
     negative score and computes, with the block kernel of :mod:`onpair._batch_kernels`, the pair-weight
     sums A_i = Σ_j ℓ'(s_i − t_j) (all negatives) and a row B_j = Σ_{i∈a} ℓ'(s_i − t_j); a tree adds
     the rows into B; partition a combines its A and its segment of B with its records into
     Σ_i A_i x_i − Σ_j B_j x_j, a d-vector; a tree of additions gives the client the exact gradient sum,
     to which it adds the step's noise (docs/algorithms.md#gradient-perturbation). Only scores, pair
     weights (one number per record and partition) and d-vectors cross the network, no record as such;
     but they are exact (the noise is added on the client), and a record's scores under d or more
     linearly independent θ determine it: the workers, the scheduler and the network must be trusted
     like the place where the records are kept (docs/distributed.md).
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

import itertools

import numpy as np

try:
    import dask
    import dask.array as da
    from dask import delayed
except ImportError as exc:  # pragma: no cover - the extra is installed by `make install`
    raise ImportError("onpair.distributed needs Dask: pip install 'onpair[dask]'") from exc

from ._batch_kernels import DEFAULT_BLOCK, _coefficient_sums, _combine, _scores
from ._statistics_kernels import statistics_total as _records_statistics_total
from ._validation import is_dask_collection
from .estimators._base import PairwiseEstimator, check_binary, warn_clipped

__all__ = ["fit", "DaskPartitions", "SPLIT_EVERY"]

#: Fan-in of the tree of additions that brings the partitions' sums to the client.
SPLIT_EVERY = 8


def fit(estimator, X, y, *, client=None):
    """Fit ``estimator`` on Dask data: per-partition sums on the workers, the noise on the client.

    Parameters
    ----------
    estimator : OffPairStats or GradientPerturbedGD
        Its parameters are checked before any task is submitted.
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
    if not hasattr(estimator, "_fit_partitioned"):
        raise TypeError(f"{type(estimator).__name__} has no distributed fit; the estimators with one are "
                        "OffPairStats and GradientPerturbedGD (fit the others on a NumPy array)")
    if not isinstance(estimator, PairwiseEstimator):
        raise TypeError(f"estimator must be an onpair estimator, got {type(estimator).__name__}")
    metric = estimator._metric_task()
    estimator._check_partitioned()  # parameters first: a bad one fails before the cluster does any work
    client = _resolve_client(client)
    blocks, labels, dim = _row_blocks(X, y)
    bounds = estimator._make_bounds(dim)
    partitions = DaskPartitions(blocks, labels, dim, bounds=bounds, metric=metric,
                                classes=getattr(estimator, "classes", None), client=client,
                                split=estimator._partition_layout == "split")
    try:
        warn_clipped(bounds, partitions.n_clipped, stacklevel=3)
        coef, report = estimator._fit_partitioned(partitions, estimator._seed_sequence())
        classes = partitions.classes
    finally:
        partitions.close()
    return estimator._set_fitted(coef, report, classes, dim, bounds, partitions.n_clipped)


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


def _prepare_partition(X, y, index, bounds, metric, classes, split) -> Partition:
    """Validate one partition (the in-process fit's checks; messages name the partition), map it."""
    y = np.asarray(y)
    if X.shape[0] == 0 and y.shape[0] == 0:
        empty = np.empty((0, bounds.n_features or X.shape[1]))
        return Partition(0, 0, empty, np.empty(0, np.int64), empty, empty)
    try:
        X, labels, _ = PairwiseEstimator._validate_training_data(X, y, metric=metric, classes=classes, minimum=1)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from None
    Z, clipped = bounds.transform(X)
    n_clipped = int(np.count_nonzero(clipped))
    if split:
        positive = labels > 0
        return Partition(Z.shape[0], n_clipped, positives=np.ascontiguousarray(Z[positive]),
                         negatives=np.ascontiguousarray(Z[~positive]))
    codes = labels.astype(np.int64) if metric else (labels > 0).astype(np.int64)
    return Partition(Z.shape[0], n_clipped, Z=np.ascontiguousarray(Z), codes=codes)


def _partition_counts(part: Partition) -> tuple:
    """What the client learns of a partition: (records, clipped records, positives, negatives)."""
    n_pos = -1 if part.positives is None else part.positives.shape[0]
    n_neg = -1 if part.negatives is None else part.negatives.shape[0]
    return part.n, part.n_clipped, n_pos, n_neg


def _partition_statistics(part: Partition, n_classes: int, weights) -> np.ndarray:
    return _records_statistics_total(part.Z, part.codes, n_classes, weights)


def _positive_scores(part: Partition, theta: np.ndarray) -> np.ndarray:
    """The partition's positives' scores X⁺θ (one number per record)."""
    s = np.empty(part.positives.shape[0])
    _scores(part.positives, theta, s)
    return s


def _negative_scores(part: Partition, theta: np.ndarray) -> np.ndarray:
    """The partition's negatives' scores X⁻θ (one number per record)."""
    t = np.empty(part.negatives.shape[0])
    _scores(part.negatives, theta, t)
    return t


def _pair_row(s: np.ndarray, negative_scores: list, loss_code: int, block: int = DEFAULT_BLOCK) -> tuple:
    """The pair weights of one partition's positives against every negative: ``(A, B_row)`` with
    A_i = Σ_j ℓ'(s_i − t_j) over all negatives and B_row[j] = Σ_{i in this partition} ℓ'(s_i − t_j), the
    negatives in partition order. Tiles of ``block`` × ``block`` pairs (the kernel's memory is
    O(block²/64)), as the in-process :func:`onpair._batch_kernels.pairwise_gradient_sum`."""
    t = np.concatenate(negative_scores)
    coef_pos, coef_neg = np.zeros(s.shape[0]), np.zeros(t.shape[0])
    tile_pos, tile_neg = np.empty(min(block, s.shape[0])), np.empty(min(block, t.shape[0]))
    tiles_pos = [(i, min(i + block, s.shape[0])) for i in range(0, s.shape[0], block)]
    tiles_neg = [(j, min(j + block, t.shape[0])) for j in range(0, t.shape[0], block)]
    for (i0, i1), (j0, j1) in itertools.product(tiles_pos, tiles_neg):
        _coefficient_sums(s[i0:i1], t[j0:j1], loss_code, tile_pos[:i1 - i0], tile_neg[:j1 - j0])
        coef_pos[i0:i1] += tile_pos[:i1 - i0]
        coef_neg[j0:j1] += tile_neg[:j1 - j0]
    return coef_pos, coef_neg


def _segment(values: np.ndarray, start: int, stop: int) -> np.ndarray:
    """One partition's share of the negatives' weights B."""
    return values[start:stop].copy()


def _partition_gradient(part: Partition, coef_pos, coef_neg) -> np.ndarray:
    """Σ_i A_i x_i − Σ_j B_j x_j over the partition's records (None: the partition has none of them)."""
    coef_pos = np.zeros(part.positives.shape[0]) if coef_pos is None else coef_pos
    coef_neg = np.zeros(part.negatives.shape[0]) if coef_neg is None else coef_neg
    out = np.empty(part.positives.shape[1])
    _combine(part.positives, coef_pos, part.negatives, coef_neg, out)
    return out


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

    Built by :func:`fit`. ``n``, ``dim``, ``n_clipped`` and ``classes`` are what the client learns of the
    data; :meth:`statistics_total` and :meth:`pairwise_gradient_sum` return exact (unnoised) sums, for
    the estimator to perturb at once; :meth:`close` releases everything the cluster holds for the fit.
    """

    def __init__(self, blocks, labels, dim, *, bounds, metric, classes, client, split):
        self.dim = dim
        self._client = client
        if classes is None:
            found = self._compute([delayed(_partition_labels)(part) for part in labels])
            classes = np.unique(np.concatenate(found)) if found else np.empty(0)
            if not metric:
                check_binary(classes)
        # The in-process fit's classes_: the public domain as given, or the labels read off y.
        self.classes = np.asarray(classes)
        prepared = [delayed(_prepare_partition)(X, y, k, bounds, metric, classes, split)
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

    def statistics_total(self, n_classes: int, weights) -> np.ndarray:
        """Σ_z v(z) over every record: per partition on its worker, then a tree of additions."""
        weights = np.asarray(weights, dtype=np.float64)
        terms = [delayed(_partition_statistics)(p, n_classes, weights) for p in self._parts]
        return self._compute(_tree_sum(terms))

    def pairwise_gradient_sum(self, theta: np.ndarray, loss_code: int) -> np.ndarray:
        """Σ_{i∈pos} Σ_{j∈neg} ℓ'(θᵀ(x_i − x_j))(x_i − x_j) over all partitions' records (one Dask graph).

        Per partition a: the scores; one task pairs a's positives with every negative score (A for a's
        positives, a row of B over all negatives); the B rows are added by a tree; each partition then
        combines its own A and its segment of B with its records. About 8p tasks for p partitions
        (``bench/dask_scaling.py`` counts them), and the scores and weights that move are one number per
        record and partition."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        has_pos = [c[2] > 0 for c in self._counts]
        has_neg = [c[3] > 0 for c in self._counts]
        negatives = [delayed(_negative_scores)(p, theta) for p, keep in zip(self._parts, has_neg) if keep]
        rows = {}
        if negatives:
            for a, part in enumerate(self._parts):
                if has_pos[a]:
                    rows[a] = delayed(_pair_row, nout=2)(delayed(_positive_scores)(part, theta), negatives, loss_code)
        if rows:
            coef_neg = _tree_sum([row[1] for row in rows.values()])
        terms, start = [], 0
        for a, part in enumerate(self._parts):
            stop = start + max(self._counts[a][3], 0)
            segment = delayed(_segment)(coef_neg, start, stop) if rows and has_neg[a] else None
            start = stop
            terms.append(delayed(_partition_gradient)(part, rows[a][0] if a in rows else None, segment))
        return self._compute(_tree_sum(terms))

    def close(self) -> None:
        """Release the persisted partitions from the cluster (also after a failed or interrupted fit)."""
        parts, self._parts = self._parts, []
        if self._client is not None and parts:
            from distributed import futures_of

            self._client.cancel(futures_of(parts))
