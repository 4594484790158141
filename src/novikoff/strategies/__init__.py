"""Hypothesis strategies for perceptron fuzzing: certified datasets, orderings, adversaries."""

from ._certify import CertifiedDataset, certify, exact_margins, exact_sq_norms
from ._datasets import (DATASET_KINDS, nonseparable_datasets, orthonormal_datasets,
                        planted_datasets, separable_datasets)

__all__ = [
    "CertifiedDataset", "certify", "exact_margins", "exact_sq_norms",
    "DATASET_KINDS", "nonseparable_datasets", "orthonormal_datasets", "planted_datasets",
    "separable_datasets",
]
