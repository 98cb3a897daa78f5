"""The public label domains of :class:`onpair.river.PrivatePairwiseClassifier` and
:class:`onpair.river.PrivateClassifier`.

A label's value, type or order of arrival is never read off the stream: without ``classes=`` the domain is
river's binary one (:data:`CANONICAL_CLASSES`, booleans or 0/1), with it the two declared labels
``(negative, positive)``. :func:`label_sign` maps a label to ±1 or refuses it; :func:`persisted_classes`
reads the domain of a snapshot (format 2 saves it; format 1 kept the first labels the stream brought, and
is loaded only where that domain is river's or declared).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["CANONICAL_CLASSES", "PositiveClass", "check_classes", "check_domain", "label_code", "label_sign", "persisted_classes"]


#: The label domain without ``classes=``: river's binary one (``predict_proba_one``'s keys, in this order).
CANONICAL_CLASSES = (False, True)


def check_classes(classes) -> tuple:
    """The public label domain ``(negative, positive)``: :data:`CANONICAL_CLASSES` for None, else
    ``classes`` checked (two distinct hashable labels, neither None nor NaN), or a ValueError.

    Examples
    --------
    >>> check_classes(None), check_classes([-1, 1])
    ((False, True), (-1, 1))
    """
    if classes is None:
        return CANONICAL_CLASSES
    if isinstance(classes, (str, bytes)) or not isinstance(classes, (tuple, list)) or len(classes) != 2:
        raise ValueError(f"classes must be a pair (negative, positive) of labels, e.g. classes=(-1, 1), got "
                         f"{classes!r}")
    return _checked_labels(classes, "two distinct labels (negative, positive)")


def check_domain(classes) -> tuple:
    """The public label domain of a multi-class model: ``classes`` checked (a list or tuple of at least two
    distinct hashable labels, none None or NaN), as a tuple, or a ValueError (a TypeError for no sequence).

    Examples
    --------
    >>> check_domain(["a", "b", "c"])
    ('a', 'b', 'c')
    """
    if isinstance(classes, (str, bytes)) or not isinstance(classes, (tuple, list)):
        raise TypeError(f"classes must be a list of the public class labels, e.g. classes=['a', 'b', 'c'], got "
                        f"{classes!r}")
    if len(classes) < 2:
        raise ValueError(f"classes must list at least two labels, got {classes!r}")
    return _checked_labels(classes, "distinct labels")


def label_code(y, codes: dict, domain: tuple, where) -> int:
    """The position of ``y`` in the public ``domain`` (the first label it equals; ``codes`` maps the domain's
    labels to their positions, for the common case of a hashable label), or a ValueError naming ``y`` and
    ``where`` (nothing is kept of it)."""
    if isinstance(y, (np.ndarray, list, tuple, dict, set)):
        raise ValueError(f"y = {y!r} ({where}): labels must be single values, not a {type(y).__name__}")
    try:
        code = codes.get(y)
    except TypeError:  # an unhashable label: compared one by one below
        code = None
    if code is not None:
        return code
    for code, label in enumerate(domain):
        if _equals(y, label):
            return code
    raise ValueError(f"y = {y!r} ({where}) is not one of the public classes = {list(domain)!r}")


def _checked_labels(classes, what) -> tuple:
    for label in classes:
        try:
            hash(label)
        except TypeError:
            raise ValueError(f"classes must hold labels that can be dict keys, got {label!r} in {classes!r}") from None
        if label is None or (isinstance(label, numbers.Real) and not isinstance(label, (bool, np.bool_))
                             and math.isnan(float(label))):
            raise ValueError(f"classes cannot hold {label!r} (it equals no label), got {classes!r}")
    for i, label in enumerate(classes):
        if any(_equals(label, other) for other in classes[:i]):
            raise ValueError(f"classes must hold {what}, got {classes!r} ({label!r} twice)")
    return tuple(classes)


def _equals(y, label) -> bool:
    try:
        return bool(y == label)
    except (TypeError, ValueError):  # an object whose comparison fails or is not a truth value
        return False


def label_sign(y, labels, declared, where) -> int:
    """The sign of ``y`` in the public domain ``labels`` = (negative, positive): +1 or −1, else a ValueError
    naming ``y`` and ``where``. Undeclared (river's binary domain): booleans and numbers equal to 0 or 1;
    declared: a label equal to one of the two."""
    if isinstance(y, (np.ndarray, list, tuple, dict, set)):
        raise ValueError(f"y = {y!r} ({where}): labels must be single values, not a {type(y).__name__}")
    if declared:
        if _equals(y, labels[1]):
            return 1
        if _equals(y, labels[0]):
            return -1
        raise ValueError(f"y = {y!r} ({where}) is not one of the public classes = {labels!r}")
    if isinstance(y, (bool, np.bool_)):
        return 1 if y else -1
    if isinstance(y, numbers.Real):
        try:
            value = float(y)
        except OverflowError:
            value = math.nan
        if value == 1.0 or value == 0.0:
            return 1 if value == 1.0 else -1
        if value == -1.0:
            raise ValueError(f"y = {y!r} ({where}) is outside the label domain: without classes=, labels are "
                             "booleans or 0/1 (river's binary domain, keys False/True). For -1/+1 labels declare "
                             "classes=(-1, 1)")
    raise ValueError(f"y = {y!r} ({where}): labels must be booleans or 0/1 (river's binary domain); for any other "
                     "labels declare the public domain, classes=(negative, positive)")


def persisted_classes(extra, given, where):
    """The ``classes`` parameter of a snapshot's model: the saved one (formats 2 and 3), checked against ``given``;
    for format 1, which kept the first labels the stream brought, ``given`` if it agrees with them, else river's
    binary domain (None) when they were booleans or 0/1, else a ValueError (nothing is read off the stream)."""
    if extra["version"] >= 2:
        saved = extra["classes"]
        if saved is not None:
            if not isinstance(saved, list) or len(saved) != 2:
                raise ValueError(f"{where}: malformed wrapper fields (classes)")
            saved = tuple(saved) if extra["classes_is_tuple"] else saved
        if given is not None and (saved is None or list(given) != list(saved)
                                  or [type(v) for v in given] != [type(v) for v in saved]):
            raise ValueError(f"{where} was saved with classes={saved!r}, not {given!r}")
        return saved
    labels, fixed = extra["labels"], extra["labels_fixed"]
    if not (isinstance(labels, list) and len(labels) == 2 and isinstance(fixed, list) and len(fixed) == 2):
        raise ValueError(f"{where}: malformed wrapper fields (labels)")
    seen = [label for label, was_fixed in zip(labels, fixed) if was_fixed]
    if given is not None:
        domain = check_classes(given)
        if any(fixed[k] and not _equals(labels[k], domain[k]) for k in (0, 1)):
            raise ValueError(f"{where}: its learned labels {seen!r} are not in classes={given!r} (negative, positive)")
        return given
    if not fixed[0] or _equals(labels[0], False):  # booleans or 0/1: river's binary domain, keys False/True
        return None
    raise ValueError(
        f"{where} was written by an earlier onpair, whose prediction keys were the first labels the stream brought "
        f"(here {labels[0]!r} for the negative class); the label domain is now public. Load it with "
        f"PrivatePairwiseClassifier.load(path, classes=({labels[0]!r}, 1)) to declare it; the file is unchanged")


def _wrapper_base():
    """``river.metrics.base.WrapperMetric`` (river is imported by this package only)."""
    from river import metrics

    return metrics.base.WrapperMetric


class PositiveClass(_wrapper_base()):
    """A river binary metric read over a declared label domain: ``y == positive`` is the positive class.

    river's binary metrics read the probability of the positive class as ``y_pred.get(True)`` and, in river
    0.26, ``ROCAUC(pos_val=...)`` with any ``pos_val`` other than ``True`` reads 0 (it counts ``y == pos_val``
    as a boolean, then asks its confusion matrix for ``pos_val``). So with labels such as ``("no", "yes")``
    ``ROCAUC(pos_val="yes")`` reads 0 whatever the model. This wrapper hands the metric booleans:
    ``y_true == positive``, and ``y_pred[positive]`` (a probability) or ``y_pred == positive`` (a label).

    Parameters
    ----------
    metric : river.metrics.base.BinaryMetric
        A binary metric with river's default ``pos_val=True`` (``ROCAUC()``, ``LogLoss()``,
        ``RollingROCAUC()``, ``F1()``, …).
    positive : hashable
        The positive label: ``classes[1]`` of :class:`onpair.river.PrivatePairwiseClassifier`.

    Examples
    --------
    >>> from river import metrics
    >>> auc = PositiveClass(metrics.ROCAUC(), positive="yes")
    >>> for y, p in [("no", 0.2), ("yes", 0.9), ("no", 0.6), ("yes", 0.5)]:
    ...     auc.update(y, {"no": 1 - p, "yes": p})
    >>> round(float(auc.get()), 3)   # 3 of the 4 opposite pairs ranked right (ROCAUC(pos_val="yes") reads 0)
    0.75
    """

    def __init__(self, metric, positive):
        from river import metrics

        if not isinstance(metric, metrics.base.BinaryMetric):
            raise TypeError(f"metric must be a river binary metric (ROCAUC(), LogLoss(), F1(), …), got {metric!r} "
                            f"({type(metric).__name__})")
        if getattr(metric, "pos_val", True) is not True:
            raise ValueError(f"metric must keep river's pos_val=True (the wrapper hands it booleans), got "
                             f"pos_val={metric.pos_val!r}: pass positive={metric.pos_val!r} here instead")
        try:
            hash(positive)
        except TypeError:
            raise TypeError(f"positive must be a label (hashable), got {positive!r}") from None
        self._metric = metric
        self.positive = positive

    @property
    def metric(self):
        return self._metric

    def _booleans(self, y_true, y_pred):
        if isinstance(y_pred, dict):
            y_pred = {True: y_pred.get(self.positive, 0.0), False: 1.0 - y_pred.get(self.positive, 0.0)}
        elif not isinstance(y_pred, float):
            y_pred = _equals(y_pred, self.positive)
        return _equals(y_true, self.positive), y_pred

    def update(self, y_true, y_pred, w=1.0):
        self._metric.update(*self._booleans(y_true, y_pred), w)

    def revert(self, y_true, y_pred, w=1.0):
        self._metric.revert(*self._booleans(y_true, y_pred), w)

    def works_with(self, model) -> bool:
        return self._metric.works_with(model)
