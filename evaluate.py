"""Evaluate players by duplicate play.

    python evaluate.py --matrix players=[random,if,greed] deals=N out=PATH
    python evaluate.py --wpg player=raw raw.num_deals=5 deals=512
    python evaluate.py game=fish mode=track model=models/fish_predictor.pt
"""

import os
import sys

# Worker processes share the CPU; waiting OpenMP threads should sleep, not spin (see train.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from scrofazero import entry  # noqa: E402

# Hydra takes key=value overrides only: the mode flags become mode=, model=PATH predictor=PATH.
sys.argv = sys.argv[:1] + entry.evaluate_arguments(sys.argv[1:])
entry.register_configs()


@hydra.main(version_base="1.3", config_path="configs", config_name="evaluate")
def main(cfg: DictConfig) -> None:
    entry.evaluate(cfg)


if __name__ == "__main__":
    entry.run_script(main)
