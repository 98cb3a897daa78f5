"""Objective perturbation (Chaudhuri et al., Kifer et al.) and approximate minima perturbation (Iyengar et
al.) for logistic regression, pointwise or pairwise: the objectives, their privacy constants and Newton
solver (:mod:`onpair.objective.functions`), their compiled terms, and the two estimators."""

from .estimators import ApproxMinimaPerturbedLogistic, ObjectivePerturbedLogistic

__all__ = ["ObjectivePerturbedLogistic", "ApproxMinimaPerturbedLogistic"]
