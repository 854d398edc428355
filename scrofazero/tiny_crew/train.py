"""`python train.py game=tiny_crew`: CFR-family learning for Tiny Crew with exact evaluation.

`game.method=cfr` runs chance-sampled CFR+ (tiny_crew/cfr.py), `game.method=mccfr`
OpenSpiel's Python external-sampling MCCFR on `python_tiny_crew`; every `game.eval_every`
iterations the average policy is evaluated exactly over the setting's deals (tensorboard
`eval/win_rate`, also `checkpoints/<run>/eval.jsonl`) and written to
`checkpoints/<run>/policy.npz` (keys, probabilities; written to a temporary file and renamed).
`python evaluate.py game=tiny_crew game.cfr_policy=...` reads it back. The learner's whole
state (regrets, strategy sums, random state) goes to `checkpoints/<run>/trainer.pkl` at the same
moments, so `resume=true` continues a run up to `game.iterations` in total; without it an
existing run is refused rather than overwritten.
"""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

import numpy as np
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from scrofazero.atomic import write_atomic
from scrofazero.games.tiny_crew.rules import Params
from scrofazero.tiny_crew.cfr import CFRTrainer
from scrofazero.tiny_crew.exact import Setting, setting_from_config
from scrofazero.tiny_crew.policy_file import save_policy

METHODS = ("cfr", "mccfr")


def run_tiny_crew_training(cfg) -> dict:
    g = cfg.game
    if g.method not in METHODS:
        raise ValueError(f"game.method must be one of {METHODS}, got {g.method!r}")
    if g.iterations < 1 or g.eval_every < 1:
        raise ValueError("game.iterations and game.eval_every must be >= 1")
    run_dir = Path(cfg.checkpoint_dir) / cfg.run
    setting = setting_from_config(g)
    params = setting.params
    run_meta = {"method": g.method, "setting": dict(params.__dict__),
                "deal_stride": int(g.deal_stride), "seed": int(cfg.train.seed)}
    learner = _learner(g, setting, params, int(cfg.train.seed))
    done, elapsed = _start_or_resume(run_dir, cfg.resume, run_meta, learner)
    writer = SummaryWriter(str(Path(cfg.log_dir) / cfg.run))
    step, average, current = learner["step"], learner["average"], learner["current"]
    bar = tqdm(total=g.iterations, initial=done, unit="it", disable=not cfg.progress,
               desc=f"tiny_crew {g.method}")
    started, last = time.perf_counter() - elapsed, {}
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
        state = {"meta": run_meta, "iterations": done, "seconds": last["seconds"],
                 "learner": learner["state"]()}
        write_atomic(run_dir / TRAINER_FILE, lambda f: pickle.dump(state, f, protocol=5))
        with open(run_dir / "eval.jsonl", "a") as f:
            f.write(json.dumps(last) + "\n")
        bar.set_postfix(win=f"{last['win_rate']:.4f}", states=last["states"])
    bar.close()
    writer.close()
    if not last:
        print(f"{run_dir} already has {done} iterations (game.iterations={g.iterations})")
        return {"iterations": done}
    print(f"{g.method}: exact win rate {last['win_rate']:.4f} after {done} iterations "
          f"({last['states']:,} information states); policy in {run_dir / 'policy.npz'}")
    return last


TRAINER_FILE = "trainer.pkl"


def _start_or_resume(run_dir: Path, resume: bool, run_meta: dict, learner: dict
                     ) -> tuple[int, float]:
    """(iterations done, seconds spent): 0 for a new run (an existing one is refused), else
    restored from trainer.pkl after checking it belongs to the same method and setting."""
    path = run_dir / TRAINER_FILE
    if not resume:
        if (run_dir / "policy.npz").exists():
            raise FileExistsError(f"{run_dir / 'policy.npz'} exists: choose another run=NAME "
                                  "or continue it with resume=true")
        run_dir.mkdir(parents=True, exist_ok=True)
        return 0, 0.0
    if not path.is_file():
        raise FileNotFoundError(f"resume=true but {path} does not exist")
    try:
        with open(path, "rb") as f:
            state = pickle.load(f)
        saved_meta = state["meta"]
    except Exception as err:  # a truncated or foreign file can raise many types
        raise ValueError(f"{path}: not a Tiny Crew trainer checkpoint ({err})") from None
    if saved_meta != run_meta:
        raise ValueError(f"{path} was written by a different run: {saved_meta} (now {run_meta})")
    learner["restore"](state["learner"])
    return int(state["iterations"]), float(state["seconds"])


def _learner(g, setting: Setting, params: Params, seed: int) -> dict:
    """step(n), average() and current() (None when the method has no current policy) policies,
    state() / restore(state) for checkpoints, for the configured method."""
    if g.method == "cfr":
        trainer = CFRTrainer(setting, seed=seed, max_states=int(g.max_states))
        return {"step": trainer.run, "average": trainer.average_policy,
                "current": trainer.current_policy, "state": trainer.state,
                "restore": trainer.restore}
    # Lazy: open_spiel is an optional extra, needed only by game.method=mccfr.
    import pyspiel
    from open_spiel.python.algorithms import external_sampling_mccfr as es

    import scrofazero.openspiel  # noqa: F401  (registers python_tiny_crew)
    from scrofazero.tiny_crew.mccfr import mccfr_to_tabular

    game = pyspiel.load_game("python_tiny_crew", {"leader": params.leader, "t1": params.t1_seat,
                                                  "t2": params.t2_seat})
    solver = es.ExternalSamplingSolver(game, es.AverageType.SIMPLE)
    np.random.seed(seed)  # OpenSpiel's sampler draws from numpy's global generator

    def step(n: int) -> None:
        for _ in range(n):
            solver.iteration()

    def restore(state: dict) -> None:
        solver._infostates = state["infostates"]  # the solver keeps all its tables here
        np.random.set_state(state["rng"])

    return {"step": step, "average": lambda: mccfr_to_tabular(solver), "current": None,
            "state": lambda: {"infostates": solver._infostates, "rng": np.random.get_state()},
            "restore": restore}
