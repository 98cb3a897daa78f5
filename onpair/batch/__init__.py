"""Full-batch gradient perturbation (Kang et al., :class:`GradientPerturbedGD`) and Yang et al.'s
output-perturbed SGD (:class:`OutputPerturbedSGD`), with their compiled kernels (the parallel pairwise
gradient, the SGD with its running sums, and the metric task's full gradient and SGD)."""

from .gradient_perturbation import GradientPerturbedGD
from .output_perturbation import OutputPerturbedSGD

__all__ = ["GradientPerturbedGD", "OutputPerturbedSGD"]
