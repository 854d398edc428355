"""What `evaluate.py` runs: a player matrix or a WPG measurement, printed and saved as JSON.

Talks to eval.arena (duplicate play) and games.gongzhu.deals (the deal set); results are
written atomically so an interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..agents import AGENT_NAMES
from ..games.gongzhu.deals import load_deals


def write_json_atomic(path: str | os.PathLike, payload: dict) -> Path:
    """Write `payload` as JSON to a temporary file beside `path`, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def _check_players(names) -> list[str]:
    names = [str(n) for n in names]
    unknown = [n for n in names if n not in AGENT_NAMES]
    if unknown:
        raise ValueError(f"unknown player(s) {unknown}; choose from {list(AGENT_NAMES)}")
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(f"a matrix needs at least two distinct players, got {names}")
    return names


def run_evaluate(cfg) -> dict:
    """Run cfg.mode ('matrix' or 'wpg') for Gongzhu; print the table; return the result dict."""
    from .arena import duplicate_match, format_matrix, matrix

    if cfg.game.name != "gongzhu":
        raise ValueError(f"evaluate.py supports game=gongzhu for now, not {cfg.game.name!r}")
    if cfg.deals is not None and cfg.deals < 1:
        raise ValueError(f"deals must be a positive number of deals, got {cfg.deals}")
    deals = load_deals(cfg.deals_file, limit=cfg.deals)
    workers = cfg.workers or os.cpu_count() or 1
    kwargs = {"greed": {"num_samples": cfg.greed_samples}}
    if "raw" in (*cfg.players, cfg.player):
        checkpoint = cfg.checkpoint or str(Path("checkpoints") / "default" / "latest.pt")
        if not Path(checkpoint).is_file():
            raise FileNotFoundError(f"checkpoint {checkpoint} not found (set checkpoint=PATH)")
        kwargs["raw"] = {"checkpoint": checkpoint, "num_deals": cfg.raw_deals}
    if cfg.mode == "matrix":
        players = _check_players(cfg.players)
        result = matrix(players, deals, seed=cfg.seed, workers=workers,
                        progress=cfg.progress, agent_kwargs=kwargs)
        print(format_matrix(result))
    elif cfg.mode == "wpg":
        _check_players([cfg.player, "greed" if cfg.player != "greed" else "random"])
        pair = {k: v for k, v in kwargs.items() if k in (cfg.player, "greed")}
        match = duplicate_match(cfg.player, "greed", deals, seed=cfg.seed, workers=workers,
                                progress=cfg.progress, agent_kwargs=pair)
        result = {"player": cfg.player, "wpg": match.mean, "stderr": match.stderr,
                  "deals": match.deals}
        print(f"WPG of {cfg.player}: {match.mean:+.1f} ({match.stderr:.1f}) points per game "
              f"over {match.deals} deals x 2")
    else:
        raise ValueError(f"unknown mode {cfg.mode!r}: use --matrix or --wpg")
    result["seed"] = cfg.seed
    if cfg.out:
        print(f"wrote {write_json_atomic(cfg.out, result)}")
    return result
