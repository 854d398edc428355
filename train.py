"""Train ScrofaZero by perfect-information self-play.

    python train.py                      # the cpu preset: learns visibly on a 2-core CPU
    python train.py experiment=smoke     # a few steps of everything
    python train.py experiment=paper     # the published recipe (GPU)
    python train.py run=NAME resume=true # continue checkpoints/NAME/latest.pt
"""

import hydra
from omegaconf import DictConfig

from scrofazero.config import register_configs

register_configs()


@hydra.main(version_base="1.3", config_path="configs", config_name="train")
def main(cfg: DictConfig) -> None:
    from scrofazero.train.loop import run_training

    run_training(cfg)


if __name__ == "__main__":
    main()
