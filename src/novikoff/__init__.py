"""novikoff: a proof checker for the perceptron's mistake-bound theory."""

from .errors import (InvalidArgument, InvariantViolation, KernelError, NovikoffError,
                     ProofSyntaxError)

__version__ = "0.1.0"
__all__ = ["InvalidArgument", "InvariantViolation", "KernelError", "NovikoffError",
           "ProofSyntaxError", "__version__"]
