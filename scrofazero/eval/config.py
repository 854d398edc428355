"""evaluate.py's settings (`EvaluateConfig`), beside the runner that reads them (eval/runner.py):
the mode, the players and their groups (each player's settings class, from agents/), the deals,
the processes. scrofazero/config.py checks a composed one once (check_evaluate) and the game's
runner receives it as it is. A registered player without a group here takes
`+NAME.SETTING=...`; OmegaConf keeps such a group as an attribute of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from scrofazero.agents.mr_greed import GreedSettings
from scrofazero.agents.raw_net import RawSettings
from scrofazero.agents.scrofazero_agent import ScrofaZeroSettings
from scrofazero.cluster import RayConfig
from scrofazero.runs import DISTRIBUTED
from scrofazero.settings import Count, GameConfig, NonNegativeInt, Seed, choice


@dataclass
class EvaluateConfig:
    # the game being evaluated (game=gongzhu | tiny_crew | fish)
    game: GameConfig = field(default_factory=GameConfig)
    # gongzhu: matrix (every pair of `players`) | wpg (`player` vs two Mr. Greeds) | belief
    # (eval/iec_diagnostic.py); fish: track | match
    mode: str = "matrix"
    # matrix rows (fish mode=match: the two teams' players)
    players: list[str] = field(default_factory=lambda: ["random", "if", "greed"])
    player: str = "scrofazero"  # the player measured by mode=wpg
    # mode=wpg: the two opponents (Mr. Greed defines WPG; another name measures robustness)
    opponent: str = "greed"
    # network checkpoint of 'raw' and 'scrofazero' (None: the newest checkpoints/*/latest.pt)
    checkpoint: str | None = None
    # the 'scrofazero' player: search, sampling, weighting
    scrofazero: ScrofaZeroSettings = field(default_factory=ScrofaZeroSettings)
    # the 'raw' player: num_deals, mode (value: 1-ply value search, paper | policy)
    raw: RawSettings = field(default_factory=RawSettings)
    # Mr. Greed: num_samples, sampled deals per decision (docs/rules.md section 9)
    greed: GreedSettings = field(default_factory=GreedSettings)
    deals: Count | None = None  # how many deals of the deal file to play (None: all)
    # deal file, one 52-code line per deal (None: the 1024 standard deals)
    deals_file: str | None = None
    seed: Seed = 0  # seeds every random decision (per deal, play and seat)
    workers: NonNegativeInt = 0  # processes playing deals in parallel (0: one per CPU core)
    belief_games: Count = 8  # mode=belief: games whose positions are scored
    # mode=belief: None, four copies of `player`; a player name: it sits at seats 1 and 3 and only
    # seats 0 and 2 are scored (as in a WPG game)
    belief_opponent: str | None = None
    out: str | None = None  # JSON file for the result (None: print only)
    # gongzhu --wpg / --matrix: none (worker processes) | ray (deals split over Ray tasks)
    distributed: Annotated[str, choice(*DISTRIBUTED)] = "none"
    ray: RayConfig = field(default_factory=RayConfig)  # settings of distributed=ray
    # fish mode=track: a learned hand predictor scored beside the tracker (model=PATH sets it)
    predictor: str | None = None
    progress: bool = True  # show a tqdm progress bar
    debug: bool = False  # show the full traceback of an error instead of one line
