"""Self-play games/s: today's single-process lockstep beside train.actors' processes.

    python benchmarks/actors.py [--json PATH] [--widths 64,256,1024] [--networks small,paper]
        [--actors 2] [--device auto] [--learner float32,tf32,bf16] [--profile 256,4096] [--tiny]

For each network (`small`, the default `cpu` preset's, and `paper`, shapes read from
configs/model/) and lockstep width W (games per batch), side by side in one run: one batch of W
games played in this process (train/selfplay.py play_selfplay, the single-process path) and by
an ActorPool of --actors actor processes and one inference server (train/actors.py), on the
same deals, with the paper's training search (0 + 2 x legal, every ply searched); games/s of
each and the ratio actors / single. On a GPU each row also gives the GPU's mean utilisation
during the batch (nvidia-smi sampled every 100 ms). --learner: learner samples/s per precision
(train.learner_precision) at minibatch 64 and 1024; --profile: where the single process's
self-play time goes at those widths (network forwards, host-to-device and device-to-host
copies, encoding, the rest: tree and engine), timed with a device synchronisation around each
part. --tiny: the tiny network at widths 4 and 8, a few seconds' rehearsal of every section.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from omegaconf import OmegaConf  # noqa: E402

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.nn.encoding import INPUT_SIZE, encode  # noqa: E402
from scrofazero.nn.evaluator import NetworkEvaluator  # noqa: E402
from scrofazero.nn.network import PolicyValueNet, num_parameters  # noqa: E402
from scrofazero.search.mcts import MCTSConfig  # noqa: E402
from scrofazero.train.actors import ActorPool, GameDraws, actor_count  # noqa: E402
from scrofazero.train.learner import make_optimizer, train_step  # noqa: E402
from scrofazero.train.selfplay import SelfPlaySettings, play_selfplay  # noqa: E402

SEARCH = MCTSConfig(search_forced=True)  # the paper's training search (configs/search/paper)
SEED = [0, 46]  # the batches' seed: game g's deal comes from (*SEED, g)
MINIBATCHES = (64, 1024)  # the paper's, and one that fills a GPU


def shape(network: str) -> dict:
    """The constructor arguments of configs/model/<network>.yaml."""
    cfg = OmegaConf.load(ROOT / "configs" / "model" / f"{network}.yaml")
    return {"hidden": list(cfg.hidden), "num_blocks": int(cfg.num_blocks)}


def make_model(network: str, device: torch.device) -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet(**shape(network)).to(device).eval()


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class GpuSampler:
    """The GPU's utilisation (%) sampled by `nvidia-smi -lms 100` while the block runs; None
    values without a GPU or without nvidia-smi."""

    def __init__(self, device: torch.device):
        self.on = device.type == "cuda" and shutil.which("nvidia-smi") is not None
        self.index = device.index or 0
        self.samples: list[float] = []

    def __enter__(self) -> GpuSampler:
        if self.on:
            self.proc = subprocess.Popen(
                ["nvidia-smi", f"--id={self.index}", "--query-gpu=utilization.gpu",
                 "--format=csv,noheader,nounits", "-lms", "100"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.reader = threading.Thread(target=self._read, daemon=True)
            self.reader.start()
        return self

    def _read(self) -> None:
        for line in self.proc.stdout:
            with contextlib.suppress(ValueError):
                self.samples.append(float(line.strip()))

    def __exit__(self, *exc) -> None:
        if self.on:
            self.proc.terminate()
            self.proc.wait()
            self.reader.join(1.0)

    def summary(self) -> dict:
        if not self.samples:
            return {"gpu_utilisation_mean": None, "gpu_utilisation_samples": 0}
        return {"gpu_utilisation_mean": float(np.mean(self.samples)),
                "gpu_utilisation_samples": len(self.samples)}


def single(model, device, width: int) -> dict:
    """One batch of `width` games in this process: play_selfplay, every game in lockstep."""
    evaluator = NetworkEvaluator(model, device=device)
    play_selfplay(evaluator, 2, np.random.default_rng(1), SEARCH)  # warm-up
    deals = GameDraws.seeded(SEED, range(width)).deals
    with GpuSampler(device) as gpu:
        sync(device)
        started = time.perf_counter()
        records = play_selfplay(evaluator, width, np.random.default_rng(0), SEARCH, deals=deals)
        sync(device)
        seconds = time.perf_counter() - started
    return {"path": "single", "seconds": seconds, "games_per_s": width / seconds,
            "evaluations_per_s": records.evaluations / seconds, **gpu.summary()}


def on_actors(pool: ActorPool, device, width: int) -> dict:
    """One batch of `width` games on the pool (the same deals as `single`)."""
    with GpuSampler(device) as gpu:
        started = time.perf_counter()
        records = pool.play(SEED, SEARCH, SelfPlaySettings(games_per_batch=width))
        seconds = time.perf_counter() - started
    return {"path": "actors", "actors": pool.actors, "seconds": seconds,
            "games_per_s": width / seconds, "evaluations_per_s": records.evaluations / seconds,
            **gpu.summary()}


def selfplay_rows(networks, widths, actors: int, device, threads: int) -> tuple[list, list]:
    """Both paths at every (network, width): rows, and the ratios actors / single."""
    rows, ratios = [], []
    with ActorPool.start(actors, device, threads=threads) as pool:
        for version, network in enumerate(networks):
            model = make_model(network, device)
            pool.publish(model, version)
            pool.play([SEED[0], SEED[1] + 1], SEARCH,
                      SelfPlaySettings(games_per_batch=2 * pool.actors))  # warm-up, other deals
            for width in widths:
                pair = [single(model, device, width), on_actors(pool, device, width)]
                for row in pair:
                    rows.append({"network": network, "width": width, **row})
                    util = row["gpu_utilisation_mean"]
                    print(f"{network:6} x{width:<5} {row['path']:7} {row['games_per_s']:9.2f} "
                          f"games/s  {row['evaluations_per_s']:10.0f} evals/s"
                          + ("" if util is None else f"  GPU {util:5.1f}%"), flush=True)
                ratio = pair[1]["games_per_s"] / pair[0]["games_per_s"]
                ratios.append({"network": network, "width": width, "actors_over_single": ratio})
                print(f"{network:6} x{width:<5} actors / single = {ratio:.2f}", flush=True)
    return rows, ratios


def synthetic_batch(rng, n: int) -> dict:
    """A minibatch shaped like the replay's (binary inputs, legal masks, targets on them)."""
    legal = rng.random((n, 52)) < 0.25
    legal[np.arange(n), rng.integers(0, 52, n)] = True
    target = np.where(legal, rng.random((n, 52)), 0.0)
    return {"inputs": (rng.random((n, INPUT_SIZE)) < 0.1).astype(np.float32), "legal": legal,
            "policy_target": (target / target.sum(1, keepdims=True)).astype(np.float32),
            "value_target": rng.normal(0, 30, n).astype(np.float32)}


def learner_rows(networks, precisions, device, steps: int) -> list:
    """Learner samples/s (train_step, Adam) per network, precision and minibatch size."""
    rows = []
    for network in networks:
        for precision in precisions:
            for size in MINIBATCHES:
                model = make_model(network, device)
                optimizer = make_optimizer(model)
                batches = [synthetic_batch(np.random.default_rng(i), size) for i in range(4)]
                for batch in batches:  # warm-up
                    train_step(model, optimizer, batch, device, precision=precision)
                sync(device)
                started = time.perf_counter()
                for i in range(steps):
                    train_step(model, optimizer, batches[i % 4], device, precision=precision)
                sync(device)
                rate = size * steps / (time.perf_counter() - started)
                rows.append({"network": network, "precision": precision, "minibatch": size,
                             "steps": steps, "samples_per_s": rate})
                print(f"{network:6} {precision:8} minibatch {size:5}: {rate:10.0f} samples/s",
                      flush=True)
    return rows


class TimedEvaluator(NetworkEvaluator):
    """NetworkEvaluator with the time of each part of a call added up: encoding, the
    host-to-device copy, the network, the device-to-host copy (each ended by a device
    synchronisation, which the untimed evaluator does not make: a profile, not a speed)."""

    def __init__(self, model, device):
        super().__init__(model, device=device)
        self.parts = {"encode": 0.0, "host_to_device": 0.0, "network": 0.0,
                      "device_to_host": 0.0}

    def __call__(self, s):
        started = time.perf_counter()
        x = encode(s) if len(s) else None
        self.parts["encode"] += time.perf_counter() - started
        return self.evaluate(s, x)

    def _forward(self, x: np.ndarray) -> np.ndarray:
        network = self._network()
        t0 = time.perf_counter()
        inputs = torch.from_numpy(x).to(self.device, non_blocking=True)
        if network is not self.model:  # the bfloat16 copy (train.inference=bfloat16)
            inputs = inputs.to(torch.bfloat16)
        sync(self.device)
        t1 = time.perf_counter()
        with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.bfloat16,
                                                    enabled=self.amp):
            logits, value = network(inputs)
            packed = torch.cat([logits.float(), value.float()[:, None]], dim=1)  # [B, 53]
        sync(self.device)
        t2 = time.perf_counter()
        out = packed.cpu().numpy()
        t3 = time.perf_counter()
        self.parts["host_to_device"] += t1 - t0
        self.parts["network"] += t2 - t1
        self.parts["device_to_host"] += t3 - t2
        return out


def profile_rows(networks, widths, device) -> list:
    """Shares of one single-process batch's wall time per part, per network and width."""
    rows = []
    for network in networks:
        model = make_model(network, device)
        for width in widths:
            evaluator = TimedEvaluator(model, device)
            play_selfplay(evaluator, 2, np.random.default_rng(1), SEARCH)  # warm-up
            evaluator.parts = dict.fromkeys(evaluator.parts, 0.0)
            started = time.perf_counter()
            play_selfplay(evaluator, width, np.random.default_rng(0), SEARCH,
                          deals=GameDraws.seeded(SEED, range(width)).deals)
            total = time.perf_counter() - started
            parts = dict(evaluator.parts)
            parts["tree_and_engine"] = total - sum(parts.values())
            shares = {k: v / total for k, v in parts.items()}
            rows.append({"network": network, "width": width, "seconds": total,
                         "shares": shares})
            print(f"{network:6} x{width:<5} " + "  ".join(f"{k} {v:.0%}"
                                                        for k, v in shares.items()), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--widths", default="64,256,1024",
                        help="lockstep widths of the self-play comparison ('' to skip it)")
    parser.add_argument("--networks", default="small,paper", help="configs/model/ names")
    parser.add_argument("--actors", default="2",
                        help="actor processes (auto: train.actors=auto's, at least 2)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads here and in the server (0: torch's default)")
    parser.add_argument("--learner", default="",
                        help="learner precisions to measure, e.g. float32,tf32,bf16")
    parser.add_argument("--learner-steps", type=int, default=100)
    parser.add_argument("--profile", default="", help="widths of the time profile")
    parser.add_argument("--tiny", action="store_true",
                        help="the tiny network at widths 4 and 8: a rehearsal of seconds")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available()
                          else ("cpu" if args.device == "auto" else args.device))
    if args.tiny:
        args.networks, args.learner_steps = "tiny", 3
        args.widths = "4,8" if args.widths else ""
        args.profile = "4" if args.profile else ""
    networks = [n for n in args.networks.split(",") if n]
    widths = [int(w) for w in args.widths.split(",") if w]
    actors = max(2, actor_count(args.actors, device))
    result = {"device": str(device), "torch_threads": torch.get_num_threads(),
              "cores": len(os.sched_getaffinity(0)), "python": platform.python_version(),
              "torch": torch.__version__, "machine": platform.processor() or platform.machine(),
              "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
              "search": "UCB, c = 30, budget 0 + 2 x legal, every ply searched",
              "parameters": {n: num_parameters(make_model(n, torch.device("cpu")))
                             for n in networks}}
    print(f"device {result['gpu'] or device}, {result['cores']} cores, "
          f"{result['torch_threads']} torch threads", flush=True)
    if widths:
        result["actors"] = actors
        result["selfplay"], result["ratios"] = selfplay_rows(networks, widths, actors, device,
                                                             args.threads)
    if args.learner:
        result["learner"] = learner_rows(networks, args.learner.split(","), device,
                                         args.learner_steps)
    if args.profile:
        result["profile"] = profile_rows(networks, [int(w) for w in args.profile.split(",")],
                                         device)
    if args.json:
        print(f"wrote {write_json_atomic(args.json, result)}")


if __name__ == "__main__":
    main()
