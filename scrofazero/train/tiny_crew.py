"""`python train.py game=tiny_crew`: CFR-family learning for Tiny Crew with exact evaluation.

`game.method=cfr` runs chance-sampled CFR+ (games/tiny_crew/cfr.py), `game.method=mccfr`
OpenSpiel's Python external-sampling MCCFR on `python_tiny_crew`; every `game.eval_every`
iterations the average policy is evaluated exactly over the setting's deals (tensorboard
`eval/win_rate`, also `checkpoints/<run>/eval.jsonl`) and written to
`checkpoints/<run>/policy.npz` (keys, probabilities; written to a temporary file and renamed).
`python evaluate.py game=tiny_crew game.cfr_policy=...` reads it back. Runs cannot be resumed
yet, so an existing run folder is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ..games.tiny_crew.exact import Setting, TabularPolicy, setting_from_config
from ..games.tiny_crew.rules import Params

METHODS = ("cfr", "mccfr")


def save_policy(path: Path, policy: TabularPolicy, meta: dict) -> None:
    """Atomic npz of a tabular policy: keys [M] int64, probs [M, 12] float32, meta (JSON)."""
    keys, probs = policy.to_arrays()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, keys=keys, probs=probs.astype(np.float32),
                     meta=np.array(json.dumps(meta)))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def load_policy(path) -> TabularPolicy:
    """A policy.npz written by save_policy; a missing or malformed file is named."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"policy file {path} not found")
    try:
        with np.load(path) as data:
            keys, probs = data["keys"], data["probs"].astype(np.float64)
    except Exception as err:  # numpy raises several types for a damaged file
        raise ValueError(f"{path}: not a Tiny Crew policy file ({err})") from None
    if probs.shape != (len(keys), 12):
        raise ValueError(f"{path}: probs has shape {probs.shape}, expected ({len(keys)}, 12)")
    return TabularPolicy.from_arrays(keys, probs)


def run_tiny_crew_training(cfg) -> dict:
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    g = cfg.game
    if g.method not in METHODS:
        raise ValueError(f"game.method must be one of {METHODS}, got {g.method!r}")
    if g.iterations < 1 or g.eval_every < 1:
        raise ValueError("game.iterations and game.eval_every must be >= 1")
    if cfg.resume:
        raise ValueError("resume=true is not supported for game=tiny_crew yet")
    run_dir = Path(cfg.checkpoint_dir) / cfg.run
    if (run_dir / "policy.npz").exists():
        raise FileExistsError(f"{run_dir / 'policy.npz'} exists: choose another run=NAME")
    run_dir.mkdir(parents=True, exist_ok=True)
    setting = setting_from_config(g)
    params = setting.params
    writer = SummaryWriter(str(Path(cfg.log_dir) / cfg.run))
    step, average, current = _learner(g, setting, params)
    bar = tqdm(total=g.iterations, unit="it", disable=not cfg.progress,
               desc=f"tiny_crew {g.method}")
    done, started, last = 0, time.perf_counter(), {}
    while done < g.iterations:
        n = min(g.eval_every, g.iterations - done)
        step(n)
        done += n
        bar.update(n)
        policy = average()
        last = {"iterations": done, "states": len(policy),
                "win_rate": setting.evaluate(policy),
                "seconds": time.perf_counter() - started}
        if current is not None:
            last["win_rate_current"] = setting.evaluate(current())
        for key in ("win_rate", "win_rate_current"):
            if key in last:
                writer.add_scalar(f"eval/{key}", last[key], done)
        writer.add_scalar("train/states", last["states"], done)
        save_policy(run_dir / "policy.npz", policy,
                    {"method": g.method, **last, "setting": dict(params.__dict__)})
        with open(run_dir / "eval.jsonl", "a") as f:
            f.write(json.dumps(last) + "\n")
        bar.set_postfix(win=f"{last['win_rate']:.4f}", states=last["states"])
    bar.close()
    writer.close()
    print(f"{g.method}: exact win rate {last['win_rate']:.4f} after {done} iterations "
          f"({last['states']:,} information states); policy in {run_dir / 'policy.npz'}")
    return last


def _learner(g, setting: Setting, params: Params):
    """(step(n), average_policy(), current_policy() or None) for the configured method."""
    if g.method == "cfr":
        from ..games.tiny_crew.cfr import CFRTrainer

        trainer = CFRTrainer(setting, seed=int(g.get("seed", 0)), max_states=int(g.max_states))
        return trainer.run, trainer.average_policy, trainer.current_policy
    import pyspiel
    from open_spiel.python.algorithms import external_sampling_mccfr as es

    import scrofazero.openspiel  # noqa: F401  (registers python_tiny_crew)

    from ..games.tiny_crew.openspiel_policy import mccfr_to_tabular

    game = pyspiel.load_game("python_tiny_crew", {"leader": params.leader, "t1": params.t1_seat,
                                                  "t2": params.t2_seat})
    solver = es.ExternalSamplingSolver(game, es.AverageType.SIMPLE)

    def step(n: int) -> None:
        for _ in range(n):
            solver.iteration()

    return step, lambda: mccfr_to_tabular(solver), None
