"""Neural network side of ScrofaZero: input encoding, the policy-value net and its evaluator."""

from scrofazero.nn.encoding import ENCODING_VERSION, INPUT_SIZE, encode, encode_own_view
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet, masked_log_softmax, num_parameters

__all__ = [
    "ENCODING_VERSION",
    "INPUT_SIZE",
    "NetworkEvaluator",
    "PolicyValueNet",
    "encode",
    "encode_own_view",
    "masked_log_softmax",
    "num_parameters",
]
