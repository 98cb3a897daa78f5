"""The one place that chooses a learner's storage kind (see :mod:`onpair.giga.pair_history`).

Adding a kind is one class (a :class:`~onpair.giga.pair_history.PairHistory`) and one line here.
"""

from __future__ import annotations

from ..core.losses import SQUARE
from .augmented_rows import AugmentedRows
from .labelled_buffer import LabelledBuffer
from .split_history import SplitHistory
from .square_loss_history import SquareLossHistory

#: Every kind by its snapshot tag.
HISTORY_KINDS = {cls.kind: cls for cls in (SplitHistory, SquareLossHistory, LabelledBuffer, AugmentedRows)}


def history_class(task, loss, slots):
    """The storage kind for a task, a loss and a slot policy.

    Examples
    --------
    >>> from onpair.core.task import make_task
    >>> from onpair.giga.slots import SlotPolicy
    >>> auc = make_task("auc")
    >>> history_class(auc, auc.get_loss("square"), SlotPolicy("all")).__name__
    'SquareLossHistory'
    >>> history_class(auc, auc.get_loss("logistic"), SlotPolicy("fifo", 8)).__name__
    'LabelledBuffer'
    """
    if task.name == "metric":
        return AugmentedRows  # history or buffer: the slot policy decides
    if slots.bounded:
        return LabelledBuffer
    if loss.code == SQUARE:
        return SquareLossHistory
    return SplitHistory


def make_history(task, loss, slots, dim: int):
    """A new, empty history of the right kind for ``dim`` features."""
    return history_class(task, loss, slots)(dim, slots)
