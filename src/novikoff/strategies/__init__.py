"""Hypothesis strategies for perceptron fuzzing: certified datasets, orderings, adversaries.

Every strategy takes keyword-only arguments and raises ``hypothesis.errors.InvalidArgument``
(message ``name=value!r``) for bad ones.  Datasets come with a separator w*, margin gamma and
radius R certified exactly from the generated data (see ``certify``).
"""

from ._adversaries import (Adversary, FirstMistakeAdversary, GreedyMarginAdversary,
                           MostMistakesAdversary, NormGrowthAdversary, NormShrinkAdversary,
                           RandomMistakeAdversary, adversarial_run, adversaries, classic_fires,
                           cyclic_run, margin_fires, probing_adversaries, textbook_learner,
                           tightness)
from ._certify import CertifiedDataset, certify, exact_margins, exact_sq_norms
from ._datasets import (DATASET_KINDS, hadamard_datasets, nonseparable_datasets,
                        orthonormal_datasets, planted_datasets, separable_datasets)
from ._dual_datasets import (KERNEL_DATASET_KINDS, KernelDataset, kernel_dataset,
                               kernel_datasets)
from ._orderings import epoch_orders, orderings, permutation_orders, repeat_orders

__all__ = [
    "CertifiedDataset", "certify", "exact_margins", "exact_sq_norms",
    "DATASET_KINDS", "hadamard_datasets", "nonseparable_datasets", "orthonormal_datasets", "planted_datasets",
    "separable_datasets",
    "KERNEL_DATASET_KINDS", "KernelDataset", "kernel_dataset", "kernel_datasets",
    "epoch_orders", "orderings", "permutation_orders", "repeat_orders",
    "Adversary", "FirstMistakeAdversary", "GreedyMarginAdversary", "MostMistakesAdversary",
    "NormGrowthAdversary", "NormShrinkAdversary", "RandomMistakeAdversary", "adversarial_run", "adversaries",
    "classic_fires", "cyclic_run", "margin_fires", "probing_adversaries", "textbook_learner",
    "tightness",
]
