"""Review of the box map (issue 34's review): a box the constructor accepts must map every record, its faces
included, into the diameter-2 domain (the sensitivity proof's premise). The map computes (2·x − lower − upper)·s
left to right, so 2·upper − lower must be finite: with bounds (−8e307, 8e307) (width 1.6e308 and 2·bound finite,
accepted before) the record on the upper face mapped to +inf, learn_one put inf into the released sums and the
released model was NaN exactly when such a record was learned. Such a box is refused now; the widest boxes
still accepted map their faces into the ball, on the block path and on the fused single-record path."""

import warnings

import numpy as np
import pytest

from onpair import OnPairStats
from onpair.core.bounds import FeatureBounds

WIDE = (-8e307, 8e307)


def test_a_box_whose_map_overflows_on_its_faces_is_refused():
    with pytest.raises(ValueError, match="2·upper − lower"):
        FeatureBounds(*WIDE)
    with pytest.raises(ValueError, match="2·upper − lower"):
        OnPairStats(epsilon=1.0, bounds=WIDE, n_features=1)
    with pytest.raises(ValueError, match="2·upper − lower"):
        FeatureBounds(lower=[0.0, -8e307], upper=[1.0, 8e307])  # per feature too


@pytest.mark.parametrize("box", [(-5.9e307, 5.9e307), (0.0, 8.9e307), (-8.9e307, 0.0)])
def test_the_widest_accepted_boxes_map_their_faces_into_the_unit_ball(box):
    bounds = FeatureBounds(*box)
    X = np.array([[box[0]], [box[1]], [0.0], [np.nextafter(box[1], 0.0)], [np.nextafter(box[0], 0.0)]])
    Z, clipped = bounds.transform(X)
    assert not clipped.any()
    assert np.all(np.isfinite(Z)) and np.all(np.linalg.norm(Z, axis=1) <= 1.0 + 1e-12)


@pytest.mark.parametrize("mechanism", ["blocks", "blt"])
def test_a_record_on_the_face_of_the_widest_box_leaves_the_release_finite(mechanism):
    box = (-5.9e307, 5.9e307)
    rng = np.random.default_rng(1)
    X = rng.uniform(-1e307, 1e307, size=(64, 1))
    y = rng.random(64) < 0.5
    X[0, 0] = box[1]  # on the box's upper face: inside the declared bounds
    learner = OnPairStats(epsilon=1.0, bounds=box, n_features=1, mechanism=mechanism, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for x, label in zip(X, y):
            learner.learn_one(x, bool(label))
    assert learner.n_releases > 0
    assert np.all(np.isfinite(learner._stats.estimate())) and np.all(np.isfinite(learner.model))
