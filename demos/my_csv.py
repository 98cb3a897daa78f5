"""Learn privately from a CSV file of your own, streamed one block at a time.

Writes a small example CSV (two features, a 0/1 label in the last column) to a temporary folder, then
streams it through OnPairStats (the default learner: class statistics released after every record) with
**public** bounds you state yourself (never computed from the file), printing the held-out AUC of the
current release every 500 records. Seeded, so that two runs print the same numbers. Point ``PATH`` and ``BOUNDS`` at your data to reuse it.
Run: ``python demos/my_csv.py``.
"""

import os
import tempfile

import numpy as np

from onpair import OnPairStats
from onpair.evaluation import roc_auc
from streams import CSVSource


def write_example(path):
    rng = np.random.default_rng(0)
    age = rng.uniform(20, 80, 3000)
    dose = rng.uniform(0, 50, 3000)
    label = (0.04 * age + 0.05 * dose + rng.normal(0, 1, 3000) > 3.6).astype(int)
    with open(path, "w") as handle:
        handle.write("age,dose,outcome\n")
        for a, d, l in zip(age, dose, label):
            handle.write(f"{a:.1f},{d:.2f},{l}\n")


def main():
    path = os.path.join(tempfile.mkdtemp(), "patients.csv")
    write_example(path)
    BOUNDS = ([18.0, 0.0], [100.0, 60.0])  # public: the study's inclusion ages, the maximal dose
    source = CSVSource(path, header=True, target="outcome", on_error="skip")
    learner = OnPairStats(epsilon=1.0, delta=1e-5, bounds=BOUNDS, seed=0)
    held_X, held_y = [], []
    for block, (X, y) in enumerate(source.iter_blocks(250)):
        if block % 4 == 3:  # every fourth block is held out to score the releases
            held_X.append(X)
            held_y.append(y)
            continue
        learner.learn_many(X, y)
        if learner.n_seen % 500 == 0 and held_y:
            Xh, yh = np.vstack(held_X), np.concatenate(held_y)
            print(f"after {learner.n_seen:>5} records: held-out AUC {roc_auc(yh, learner.decision_function(Xh)):.3f}, "
                  f"ε spent {learner.privacy_report()['epsilon_spent']:.3f} (the whole stream's, fixed at the first "
                  "record)")
    print(f"\nread {source.report['rows_read']} rows, skipped {source.report['rows_skipped']}; "
          f"final status: {learner.privacy_report()['status']}")


if __name__ == "__main__":
    main()
