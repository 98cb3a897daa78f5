"""What every family shares: public bounds, geometry, losses, validation, compiled primitives, the roots
of the online learners (:mod:`onpair.core.stream`) and of the offline estimators
(:mod:`onpair.core.estimator`), and snapshot reading. No module here imports a family package."""
