"""What `evaluate.py game=gongzhu` runs: a player matrix, a WPG measurement or the IEC belief
diagnostic, printed and returned as a dict (the entry point writes it as JSON).

It receives evaluate.py's settings checked (eval/config.py EvaluateConfig, checked by
scrofazero/config.py check_evaluate: each field within its declared bounds); what the types
cannot say is checked here: the players' names are registered players. Talks to eval.arena
(duplicate play), games.gongzhu.deals (the deal set) and the players.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

from scrofazero import shipped as shipped_files
from scrofazero.agents import PlayerSpec, make_agent, player_names, player_spec
from scrofazero.cluster import connect
from scrofazero.eval.arena import duplicate_match, format_matrix, matrix
from scrofazero.eval.config import EvaluateConfig
from scrofazero.eval.epsilon import format_intransitivity, intransitivity
from scrofazero.eval.iec_diagnostic import belief_quality
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.settings import renamed


def _check_players(names) -> list[str]:
    names = [str(n) for n in names]
    unknown = [n for n in names if n not in player_names()]
    if unknown:
        raise ValueError(f"unknown player(s) {unknown}; choose from {list(player_names())}")
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(f"a matrix needs at least two distinct players, got {names}")
    return names


def find_checkpoint(checkpoint, root="checkpoints", shipped: Path | None = shipped_files.NETWORK
                    ) -> str:
    """`checkpoint` if given (it must exist), else the most recently written
    <root>/<run>/latest.pt, else the shipped network (shipped.py); FileNotFoundError naming
    what is missing."""
    if checkpoint:
        if not Path(checkpoint).is_file():
            raise FileNotFoundError(f"checkpoint {checkpoint} not found (set checkpoint=PATH)")
        return str(checkpoint)
    found = sorted(Path(root).glob("*/latest.pt"), key=lambda p: p.stat().st_mtime)
    if found:
        return str(found[-1])
    if shipped is not None and Path(shipped).is_file():
        return str(shipped)
    raise FileNotFoundError(
        f"no checkpoint under {root}/*/latest.pt and no shipped model {shipped}: train one with "
        "`python train.py` or set checkpoint=PATH")


def _group(settings: EvaluateConfig, name: str) -> dict:
    """The settings the group named after a player gives (field -> value); {} if none."""
    given = getattr(settings, name, None)
    if given is None:
        return {}
    if dataclasses.is_dataclass(given):
        return {f.name: getattr(given, f.name) for f in dataclasses.fields(given)}
    if not isinstance(given, dict):
        raise ValueError(f"{name} must be the group of player {name!r}'s settings, got {given!r}")
    return given


def player_settings(settings: EvaluateConfig, spec: PlayerSpec):
    """The player's settings as evaluate.py's settings give them: its group `NAME.SETTING`
    (`+NAME.SETTING=...` on the command line for a player without a schema group), else the
    defaults. A bad one raises an error naming it as the user spelled it."""
    given = _group(settings, spec.name)
    keys = [f.name for f in dataclasses.fields(spec.settings)]
    keys += list(given)  # an unknown one is named too
    try:  # the group's class checks its values as it is built, too
        return spec.settings_from(given)
    except ValueError as err:
        raise renamed(err, {key: f"{spec.name}.{key}" for key in keys}) from None


def _agent_kwargs(cfg: EvaluateConfig, names, workers: int) -> tuple[dict, str | None]:
    """make_agent keyword arguments for the players `names` (those with any), and the
    checkpoint the network players load. Every player's settings are checked first, before any
    file is looked for."""
    specs = [player_spec(n) for n in names]
    settings = {spec.name: player_settings(cfg, spec) for spec in specs}
    checkpoint = find_checkpoint(cfg.checkpoint) if any(s.network for s in specs) else None
    kwargs = {spec.name: spec.arguments(settings[spec.name], checkpoint if spec.network else None)
              for spec in specs}
    return {k: v for k, v in kwargs.items() if v}, checkpoint


def evaluate_gongzhu(cfg: EvaluateConfig) -> dict:
    """Run cfg.mode ('matrix', 'wpg' or 'belief') for Gongzhu; print; return the result dict."""
    workers = cfg.workers or os.cpu_count() or 1
    backend = "processes"
    if cfg.distributed == "ray" and cfg.mode in ("matrix", "wpg"):
        ray = connect(cfg.ray.address, cfg.ray.num_cpus)
        backend = "ray"
        workers = int(cfg.ray.tasks or ray.cluster_resources().get("CPU", 1))
        print(f"distributed=ray: the deals split over {workers} Ray tasks")
    if cfg.mode == "matrix":
        players = _check_players(cfg.players)
        kwargs, checkpoint = _agent_kwargs(cfg, players, workers)
        deals = load_deals(cfg.deals_file, limit=cfg.deals)
        result = matrix(players, deals, seed=cfg.seed, workers=workers,
                        progress=cfg.progress, agent_kwargs=kwargs, backend=backend)
        print(format_matrix(result))
        if len(players) >= 3:
            result["intransitivity"] = intransitivity(result["margin"])
            print(format_intransitivity(players, result["intransitivity"]))
    elif cfg.mode == "wpg":
        opponent = cfg.opponent
        for name in {cfg.player, opponent}:  # a player may meet copies of itself
            player_spec(name)
        kwargs, checkpoint = _agent_kwargs(cfg, [cfg.player, opponent], workers)
        deals = load_deals(cfg.deals_file, limit=cfg.deals)
        if checkpoint:
            print(f"{cfg.player} plays with {checkpoint}")
        started = time.perf_counter()
        match = duplicate_match(cfg.player, opponent, deals, seed=cfg.seed, workers=workers,
                                progress=cfg.progress, agent_kwargs=kwargs, backend=backend)
        wall = time.perf_counter() - started
        games = 2 * match.deals
        result = {"player": cfg.player, "opponent": opponent, "wpg": match.mean,
                  "stderr": match.stderr, "deals": match.deals, "games": games,
                  # time one worker process spends per game (all four seats' moves)
                  "seconds_per_game": wall * min(workers, match.deals) / games,
                  "wall_seconds": wall, "workers": workers, "checkpoint": checkpoint,
                  # per-deal values, so that two runs on the same deals can be compared paired
                  "values": match.values.tolist()}
        result["settings"] = dataclasses.asdict(player_settings(cfg, player_spec(cfg.player)))
        against = "" if opponent == "greed" else f" against two {opponent}"
        print(f"WPG of {cfg.player}{against}: {match.mean:+.1f} ({match.stderr:.1f}) points per "
              f"game over {match.deals} deals x 2; {result['seconds_per_game']:.2f} s per game")
    elif cfg.mode == "belief":
        result = _run_belief(cfg)
    else:
        raise ValueError(f"unknown mode {cfg.mode!r}: use --matrix, --wpg or mode=belief")
    result["seed"] = cfg.seed
    return result


def _run_belief(cfg: EvaluateConfig) -> dict:
    """mode=belief: eval.iec_diagnostic on games of four copies of cfg.player (the net's own
    view), or, with belief_opponent=NAME, of cfg.player at seats 0 and 2 against that player at
    seats 1 and 3, scored at seats 0 and 2 (the positions a WPG game asks about)."""
    opponent = cfg.belief_opponent
    _check_players([cfg.player, opponent or ("greed" if cfg.player != "greed" else "random")])
    names = [cfg.player] + ([opponent] if opponent and opponent != cfg.player else [])
    kwargs, checkpoint = _agent_kwargs(cfg, names, 1)
    checkpoint = checkpoint or find_checkpoint(cfg.checkpoint)
    player = make_agent(cfg.player, **kwargs.get(cfg.player, {}))
    other = make_agent(opponent, **kwargs.get(opponent, {})) if opponent else player
    evaluator = NetworkEvaluator(load_model(checkpoint))
    settings = cfg.scrofazero
    deals = load_deals(cfg.deals_file, limit=cfg.belief_games)
    result = belief_quality([player, other, player, other],
                            lambda x: evaluator.forward_features(x)[0], deals,
                            cfg.seed, num_important=settings.sampling.num_important,
                            per_stratum=settings.sampling.per_stratum * settings.weighting.draws,
                            iec=settings.weighting, progress=cfg.progress,
                            seats=(0, 2) if opponent else (0, 1, 2, 3))
    result.update(player=cfg.player, opponent=opponent, checkpoint=checkpoint)
    against = f" against {opponent}" if opponent else ""
    print(f"belief over {result['card_predictions']} important-card predictions in "
          f"{result['informed_positions']} informed positions of {result['games']} games of "
          f"{cfg.player}{against}: log-likelihood gain of IEC over uniform "
          f"{result['mean_log_likelihood_gain']:+.4f} ({result['gain_stderr']:.4f}) nats; "
          f"holder accuracy {result['accuracy_iec']:.3f} IEC vs {result['accuracy_uniform']:.3f} "
          f"uniform; mean ESS {result['mean_ess']:.2f} of {result['mean_deals']:.1f} deals")
    return result
