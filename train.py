"""Train ScrofaZero by perfect-information self-play.

    python train.py                      # the cpu preset: learns visibly on a 2-core CPU
    python train.py experiment=smoke     # a few steps of everything
    python train.py experiment=paper     # the published recipe (GPU)
    python train.py run=NAME resume=true # continue checkpoints/NAME/latest.pt
"""

import os

# Torch's OpenMP threads spin while waiting by default; when evaluation workers or anything else
# shares a small CPU that slows self-play many-fold, so let waiting threads sleep instead.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from scrofazero import entry  # noqa: E402

entry.register_configs()


@hydra.main(version_base="1.3", config_path="configs", config_name="train")
def main(cfg: DictConfig) -> None:
    entry.train_command(cfg)


if __name__ == "__main__":
    entry.run_script(main)
