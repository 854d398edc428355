"""Play Gongzhu against ScrofaZero in a browser; outside bots join over docs/protocol.md.

    python play.py                          # http://127.0.0.1:8000/, records in records/
    python play.py port=8080 db=postgresql://user@host/gongzhu checkpoint=PATH
"""

import hydra
from omegaconf import DictConfig

from scrofazero import entry

entry.register_configs()


@hydra.main(version_base="1.3", config_path="configs", config_name="play")
def main(cfg: DictConfig) -> None:
    entry.play(cfg)


if __name__ == "__main__":
    entry.run_script(main)
