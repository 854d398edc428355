"""The networks shipped in models/, each beside its card (models/<name>.md): the one module that
knows their files. Knows paths only (no torch); each file's reader lives with its network
(nn/checkpoint.py, nn/belief.py, nn/behaviour.py)."""

from __future__ import annotations

from pathlib import Path

MODELS = Path(__file__).resolve().parents[1] / "models"
NETWORK = MODELS / "scrofazero.pt"  # the policy/value network of the raw and full players
SMALL_NETWORK = MODELS / "scrofazero_small.pt"  # a small network for quick tables and tests
BELIEF = MODELS / "belief.pt"  # the card-location network
BEHAVIOUR = MODELS / "behaviour.pt"  # the behaviour network (policy-based inference)


def network_file(path=None) -> str:
    """`path` when given (it must exist), else the shipped policy/value network; a
    FileNotFoundError naming the missing file.

    Args:
        path: a network file, or None / "" for models/scrofazero.pt.
    """
    if path:
        if not Path(path).is_file():
            raise FileNotFoundError(f"network {path} not found (set checkpoint=PATH)")
        return str(path)
    if not NETWORK.is_file():
        raise FileNotFoundError(f"the shipped network {NETWORK} is missing: train one with "
                                "`python train.py` or give checkpoint=PATH")
    return str(NETWORK)
