"""`python train.py game=tiny_crew`: CFR-family learning for Tiny Crew with exact evaluation.

`game.method=cfr` runs chance-sampled CFR+ (tiny_crew/cfr.py), `game.method=mccfr`
OpenSpiel's Python external-sampling MCCFR on `python_tiny_crew`; every `game.eval_every`
iterations the average policy is evaluated exactly over the setting's deals (tensorboard
`eval/win_rate`, also `checkpoints/<run>/eval.jsonl`) and written to
`checkpoints/<run>/policy.npz` (keys, probabilities; written to a temporary file and renamed).
`python evaluate.py game=tiny_crew game.cfr_policy=...` reads it back. The learner's whole
state (regrets, strategy sums, random state) goes to `checkpoints/<run>/trainer.npz` at the same
moments, after that evaluation's eval.jsonl line, so `resume=true` continues a run up to
`game.iterations` in total with exactly the policy and log of an uninterrupted run; without it
an existing run is refused rather than overwritten. The run (folder and lock, fresh or resumed,
settings compared, logs rewound to the checkpoint, tensorboard) is the run harness's
(scrofazero/runs.py).

trainer.npz holds numeric arrays and one JSON string (`info`: format, run meta, iterations,
seconds, the learner's scalars and random state, and the harness's envelope header `run`) and is
read with allow_pickle=False, so a crafted file cannot run code when resumed (the pickle it
replaces could).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scrofazero.atomic import write_atomic
from scrofazero.games.tiny_crew.rules import Params
from scrofazero.runs import (
    Envelope,
    RunFolder,
    random_states,
    read_envelope,
    resume_or_start,
)
from scrofazero.tiny_crew.cfr import CFRTrainer
from scrofazero.tiny_crew.exact import Setting, setting_from_config
from scrofazero.tiny_crew.policy_file import save_policy

METHODS = ("cfr", "mccfr")
GAME = "tiny_crew"
LOGS = {"eval.jsonl": "iterations"}  # the run's jsonl log and the key of a line's step


def run_tiny_crew_training(cfg) -> dict:
    g = cfg.game
    if g.method not in METHODS:
        raise ValueError(f"game.method must be one of {METHODS}, got {g.method!r}")
    if g.iterations < 1 or g.eval_every < 1:
        raise ValueError("game.iterations and game.eval_every must be >= 1")
    with RunFolder(Path(cfg.checkpoint_dir) / cfg.run, Path(cfg.log_dir) / cfg.run,
                   logs=LOGS) as folder:
        return _train(cfg, folder)


def run_settings(run_meta: dict) -> dict:
    """The run's meta as the settings the harness compares, named as the config names them."""
    return {"game": {k: v for k, v in run_meta.items() if k != "seed"}, "seed": run_meta["seed"]}


def _train(cfg, folder: RunFolder) -> dict:
    g = cfg.game
    run_dir = folder.folder
    setting = setting_from_config(g)
    params = setting.params
    run_meta = {"method": g.method, "setting": dict(params.__dict__),
                "deal_stride": int(g.deal_stride), "seed": int(cfg.seed)}
    learner = _learner(g, setting, params, int(cfg.seed))
    envelope = _start_or_resume(run_dir, cfg.resume, run_meta, learner,
                                list(cfg.resume_overrides))
    done, elapsed = 0, 0.0
    if envelope is not None:
        done, elapsed = envelope.step, float(envelope.state["info"]["seconds"])
    folder.begin(envelope)
    writer = folder.writer
    assert writer is not None  # begin opened it
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
        folder.log("eval.jsonl", last)  # before the checkpoint of its iterations
        writer.flush()
        save_policy(run_dir / "policy.npz", policy,
                    {"method": g.method, **last, "setting": dict(params.__dict__)})
        _save_trainer(run_dir / TRAINER_FILE, run_meta, done, last["seconds"],
                      learner["state"]())
        folder.checkpointed(done)
        bar.set_postfix(win=f"{last['win_rate']:.4f}", states=last["states"])
    bar.close()
    if not last:
        print(f"{run_dir} already has {done} iterations (game.iterations={g.iterations})")
        return {"iterations": done}
    print(f"{g.method}: exact win rate {last['win_rate']:.4f} after {done} iterations "
          f"({last['states']:,} information states); policy in {run_dir / 'policy.npz'}")
    return last


TRAINER_FILE = "trainer.npz"
OLD_TRAINER_FILE = "trainer.pkl"  # the pickle format before; never loaded (it could run code)
TRAINER_FORMAT = {"format": "scrofazero tiny_crew trainer", "version": 1}


def _save_trainer(path: Path, run_meta: dict, iterations: int, seconds: float,
                  state: dict) -> None:
    """The learner's flat `state` dict split into its numpy arrays (npz members) and everything
    else (JSON in the `info` member), written atomically."""
    arrays = {k: v for k, v in state.items() if isinstance(v, np.ndarray)}
    scalars = {k: v for k, v in state.items() if not isinstance(v, np.ndarray)}
    if "info" in arrays:
        raise ValueError("a learner state may not name an array 'info' (the JSON member)")
    header = Envelope(GAME, settings=run_settings(run_meta), step=int(iterations),
                      random=random_states()).header()
    info = {**TRAINER_FORMAT, "meta": run_meta, "iterations": int(iterations),
            "seconds": float(seconds), "learner": scalars, "run": header}
    # json.dumps first: a value JSON cannot hold fails here, before the old file is replaced
    text = json.dumps(info)
    # (numpy's stub takes **arrays for a keyword that might be allow_pickle)
    write_atomic(path, lambda f: np.savez(f, info=np.array(text),
                                          **arrays))  # type: ignore[arg-type]


def _load_trainer(path: Path) -> tuple[dict, dict]:
    """(info, learner state) from a trainer.npz; ValueError naming `path` for anything else.
    allow_pickle=False: an object array (pickled data) inside the file is refused, not run."""
    try:
        data = np.load(path, allow_pickle=False)
        if not hasattr(data, "files"):
            raise ValueError("a single .npy array, not an npz archive")
        with data:
            arrays = {name: data[name] for name in data.files}
        if "info" not in arrays:
            raise ValueError("no 'info' member")
        info = json.loads(str(arrays.pop("info")))
        if not isinstance(info, dict) or {k: info.get(k) for k in TRAINER_FORMAT} != TRAINER_FORMAT:
            raise ValueError(f"info is not {TRAINER_FORMAT}")
        for key in ("meta", "iterations", "seconds", "learner"):
            if key not in info:
                raise ValueError(f"info has no {key!r}")
        if any(a.dtype.kind not in "biuf" for a in arrays.values()):
            raise ValueError("non-numeric array member")
    except Exception as err:  # numpy, zipfile and json raise many types for a bad file
        raise ValueError(f"{path}: not a Tiny Crew trainer checkpoint ({err})") from None
    return info, {**info["learner"], **arrays}


def load_envelope(path: Path) -> Envelope:
    """The run envelope of trainer file `path` (state: its info and the learner's state); a file
    written before the envelope gives the settings its meta names and no random states."""
    info, state = _load_trainer(path)
    if not isinstance(info["meta"], dict) or "seed" not in info["meta"]:
        raise ValueError(f"{path}: not a Tiny Crew trainer checkpoint (meta is not the run's "
                         "settings)")
    if not isinstance(info["iterations"], int) or not isinstance(info["seconds"], (int, float)):
        raise ValueError(f"{path}: not a Tiny Crew trainer checkpoint (iterations and seconds "
                         "must be numbers)")
    return read_envelope(info.get("run"), {"info": info, "learner": state}, path, GAME,
                         step=info["iterations"], legacy_settings=run_settings(info["meta"]),
                         counted=f"its {info['iterations']} iterations",
                         # written while the seed was named train.seed
                         stale=lambda settings: "train" in settings)


def _start_or_resume(run_dir: Path, resume: bool, run_meta: dict, learner: dict,
                     overrides=()) -> Envelope | None:
    """None for a new run (an existing one is refused), else the envelope of trainer.npz, its
    settings checked against the run's (runs.resume_or_start) and the learner restored."""
    path = run_dir / TRAINER_FILE
    old = run_dir / OLD_TRAINER_FILE
    if resume and not path.is_file() and old.is_file():
        raise ValueError(f"{old}: the pickle trainer format is no longer read (loading it "
                         f"could run code); resume=true needs {path}: start a new run")
    found = next((p for p in (run_dir / "policy.npz", path) if p.exists()), None)
    envelope = resume_or_start(path, resume=resume, load=load_envelope,
                               settings=run_settings(run_meta), overrides=overrides, found=found)
    if envelope is None:
        return None
    try:
        learner["restore"](envelope.state["learner"])
    except (ValueError, TypeError, KeyError) as err:  # shapes, dtypes or fields that do not fit
        raise ValueError(f"{path}: cannot restore the learner ({err})") from None
    return envelope


def _learner(g, setting: Setting, params: Params, seed: int) -> dict:
    """step(n), average() and current() (None when the method has no current policy) policies,
    state() / restore(state) for checkpoints (a flat dict of numpy arrays and JSON values, as
    trainer.npz stores it), for the configured method."""
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

    return {"step": step, "average": lambda: mccfr_to_tabular(solver), "current": None,
            "state": lambda: _mccfr_state(solver), "restore": lambda s: _mccfr_restore(solver, s)}


def _mccfr_state(solver) -> dict:
    """The solver's tables (`_infostates`: info state string -> [regrets, average strategy],
    one entry per legal action; it keeps nothing else between iterations) as three flat arrays
    plus the keys in insertion order, and numpy's global random state (its sampler) as JSON."""
    keys = list(solver._infostates)
    tables = list(solver._infostates.values())
    rng = np.random.get_state(legacy=False)
    return {"keys": keys,
            "lengths": np.array([len(r) for r, _ in tables], dtype=np.int64),
            "regrets": np.concatenate([r for r, _ in tables]) if tables else np.zeros(0),
            "avg": np.concatenate([a for _, a in tables]) if tables else np.zeros(0),
            "rng": {**rng, "state": {"key": rng["state"]["key"].tolist(),
                                     "pos": int(rng["state"]["pos"])}}}


def _mccfr_restore(solver, state: dict) -> None:
    """Inverse of _mccfr_state; ValueError when the pieces do not fit together."""
    keys, lengths = state["keys"], state["lengths"]
    regrets, avg = state["regrets"], state["avg"]
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError("keys must be a list of information state strings")
    if lengths.shape != (len(keys),) or (len(keys) and lengths.min() < 1):
        raise ValueError(f"lengths has shape {lengths.shape} for {len(keys)} keys")
    total = int(lengths.sum())
    if regrets.shape != (total,) or avg.shape != (total,):
        raise ValueError(f"regrets {regrets.shape} / avg {avg.shape} do not hold {total} values")
    bounds = np.cumsum(lengths)[:-1]
    solver._infostates = {
        key: [r.astype(np.float64), a.astype(np.float64)]  # copies: the solver adds in place
        for key, r, a in zip(keys, np.split(regrets, bounds), np.split(avg, bounds))}
    rng = state["rng"]
    np.random.set_state({**rng, "state": {"key": np.array(rng["state"]["key"], dtype=np.uint32),
                                          "pos": rng["state"]["pos"]}})
