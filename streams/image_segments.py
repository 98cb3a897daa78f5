"""river's ImageSegments (UCI Image Segmentation) with public feature bounds from its documentation.

2,310 records (3×3 regions of 7 outdoor images), 18 numeric features, 7 classes of 330 (``CLASSES``, the
documented region types). river bundles the file, so no download is needed. The bounds come from what each
feature means (``segmentation.names``), never from the records; assumptions are marked.

Examples
--------
>>> X, y, (lower, upper) = load_image_segments()
>>> X.shape, len(set(y.tolist())), bool((lower < upper).all())
((2310, 18), 7, True)
"""

from __future__ import annotations

import math

import numpy as np

#: The documented class domain (public).
CLASSES = ("brickface", "cement", "foliage", "grass", "path", "sky", "window")

# Public bounds per feature (river's names and order), from the UCI documentation of the data set
# (segmentation.names: each record describes a 3×3 region of an RGB image). Assumptions are marked.
BOUNDS = {
    # The column / row of the region's centre pixel in the image. The documentation gives no image
    # size; we take 256-pixel images, coordinates 0..255 (assumption).
    "region-centroid-col": (0.0, 255.0),
    "region-centroid-row": (0.0, 255.0),
    # (region-pixel-count, always 9 for a 3×3 region, is not in river's copy.)
    # Short-line densities (lines of length 5 of low / high contrast through the region): densities,
    # fractions in [0, 1].
    "short-line-density-5": (0.0, 1.0),
    "short-line-density-2": (0.0, 1.0),
    # Mean and "standard deviation" of the 6 contrasts of horizontally (vedge) / vertically (hedge)
    # adjacent pixels. A contrast of two 8-bit intensities lies in [0, 255] (assumption: 0–255
    # channels). The file's -sd columns are not standard deviations in those units (a standard deviation
    # of values in [0, 255] is at most 127.5, and the columns reach 991.7 and 1,386.3, beyond any standard
    # deviation: they are variances, as the square of the documented quantity): a variance of values in
    # [0, 255] is at most 127.5² = 16,256.25. Computed variances may come out a rounding error below 0
    # (−1.6e-8 in the file): the lower bound leaves a margin of 0.01 for it.
    "vedge-mean": (0.0, 255.0),
    "vegde-sd": (-0.01, 127.5**2),  # sic: river's (and UCI's) spelling
    "hedge-mean": (0.0, 255.0),
    "hedge-sd": (-0.01, 127.5**2),
    # Region means of (R + G + B)/3 and of R, B, G: intensities in [0, 255].
    "intensity-mean": (0.0, 255.0),
    "rawred-mean": (0.0, 255.0),
    "rawblue-mean": (0.0, 255.0),
    "rawgreen-mean": (0.0, 255.0),
    # Excess red 2R − (G + B), excess blue 2B − (G + R), excess green 2G − (R + B): [−510, 510].
    "exred-mean": (-510.0, 510.0),
    "exblue-mean": (-510.0, 510.0),
    "exgreen-mean": (-510.0, 510.0),
    # Foley & van Dam's HSV transform of RGB: value = max(R, G, B) in [0, 255], saturation
    # = (max − min)/max in [0, 1], hue an angle, which the data set stores in radians: [−π, π].
    "value-mean": (0.0, 255.0),
    "saturation-mean": (0.0, 1.0),
    "hue-mean": (-math.pi, math.pi),
}
FEATURES = tuple(BOUNDS)
LOWER = np.array([BOUNDS[f][0] for f in FEATURES])
UPPER = np.array([BOUNDS[f][1] for f in FEATURES])


def load_image_segments():
    """``(X, y, (lower, upper))``: river's records in its order as a float64 array (n, 18) in
    :data:`FEATURES` order, the class names, and the public bounds."""
    from river import datasets

    rows, labels = [], []
    for x, label in datasets.ImageSegments():
        rows.append([float(x[f]) for f in FEATURES])
        labels.append(label)
    return np.array(rows), np.array(labels, dtype=object), (LOWER.copy(), UPPER.copy())
