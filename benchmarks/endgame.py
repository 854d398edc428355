"""The exact endgame measured: its speed by trick, and what the per-world search loses beside it.

    python benchmarks/endgame.py --json PATH [--deals 32] [--speed-deals 8] [--speed-from 8]
                                 [--exact-from 9] [--worlds 18] [--properties-from 9]
                                 [--properties-deals 32] [--parts speed,properties,audit]

Speed (one core): Mr. Greed plays the first --speed-deals standard deals at every seat; at each
decision of seats 0 and 2 with a choice from trick --speed-from on, the solver values every
legal card in --worlds uniformly drawn worlds (scrofazero/agents/endgame.py): milliseconds per
decision, nodes per decision and nodes per second, by trick.

Audit (docs/results.md, "Past sampled worlds"): the full player with the MCTS search to the end
(`endgame.trick=0`, the settings it had before the endgame) plays seats 0 and 2 against two Mr.
Greeds on the first --deals standard deals. At each searched decision, over its weighted worlds:

- disagreement: the weight of the worlds whose own best card is not the card played, and the
  weighted spread (standard deviation) of the played card's value across worlds;
- from trick --exact-from on, the same worlds solved exactly: the per-world search error (mean
  |MCTS value - exact value| over the legal cards), the weight of worlds where MCTS's best card
  is not an exact best, its exact regret in points, and at the decision: how often the weighted
  MCTS choice differs from the weighted exact choice and what that costs on the exact values.

Properties (item 1(b): Long, Sturtevant, Buro and Furtak's three measures of when PIMC loses
little, read on Gongzhu's scores): Mr. Greed's games at every seat, at every decision with a
choice from trick --properties-from on, solved on the true deal (--properties-deals games):

- leaf correlation: how often every legal card has the same exact value (the choice cannot
  matter; their "sibling leaves share one payoff", here over the position's whole subtree);
- bias: how often the exact value favours the side to move (> 0), and is a draw (= 0);
- disambiguation: at every play, for each of the other three seats, whether the play shrinks
  the number of deals consistent with that seat's information (its hand, the plays, the voids
  shown; sampling/uniform.py count_consistent_deals), and the information sets' size, by trick.

All printed as a table by trick and written to --json.
"""

from __future__ import annotations

import sys

from single_core import pin_one_core  # sets the thread variables before numpy is imported

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrofazero.agents.endgame import EndgameConfig, EndgameSolver  # noqa: E402
from scrofazero.agents.mr_greed import MrGreed  # noqa: E402
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent  # noqa: E402
from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.games.gongzhu.batch import StateBatch  # noqa: E402
from scrofazero.games.gongzhu.deals import load_deals  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402
from scrofazero.sampling.uniform import (  # noqa: E402
    count_consistent_deals,
    owners_to_hands,
    sample_hands,
)
from scrofazero.shipped import network_file  # noqa: E402


def speed(deals: np.ndarray, start: int, worlds: int) -> dict:
    """Per trick: the solver's time and nodes per decision over `worlds` uniform worlds."""
    solver = EndgameSolver()
    greed = MrGreed()
    per: dict[int, list[tuple[float, int]]] = {}
    warm = GongzhuState(deals[0])
    while warm.num_played < 48:  # compile (or load) the kernels outside the timing
        warm.apply(warm.legal_actions()[0])
    view = warm.view(warm.current_player)
    b = StateBatch.from_view(view, sample_hands(view, 1, np.random.default_rng(0)))
    solver.card_values(b.hands, b.piles, b.trick, b.trick_len, b.leader, view.legal_actions())
    for i, deal in enumerate(deals):
        state = GongzhuState(deal)
        rng = np.random.default_rng(i)
        while not state.is_terminal():
            seat = state.current_player
            view = state.view(seat)
            legal = view.legal_actions()
            trick = state.num_played // 4 + 1
            if seat % 2 == 0 and trick >= start and len(legal) > 1:
                b = StateBatch.from_view(view, sample_hands(view, worlds, rng))
                nodes = solver.nodes
                began = time.perf_counter()
                solver.card_values(b.hands, b.piles, b.trick, b.trick_len, b.leader, legal)
                per.setdefault(trick, []).append((time.perf_counter() - began,
                                                  solver.nodes - nodes))
            state.apply(greed.act(view, rng))
    rows = {}
    for trick in sorted(per):
        seconds = np.array([s for s, _ in per[trick]])
        nodes = np.array([n for _, n in per[trick]])
        rows[trick] = {"decisions": len(seconds), "ms_mean": 1e3 * seconds.mean(),
                       "ms_p90": 1e3 * float(np.percentile(seconds, 90)),
                       "ms_max": 1e3 * seconds.max(), "nodes_mean": float(nodes.mean()),
                       "nodes_per_s": float(nodes.sum() / seconds.sum())}
    return rows


def properties(deals: np.ndarray, start: int) -> dict:
    """Per trick: leaf correlation and bias from trick `start` on, disambiguation at every trick
    (see the module's docstring), over Mr. Greed's games of `deals`."""
    solver = EndgameSolver()
    greed = MrGreed()
    per: dict[int, dict[str, list[float]]] = {}
    for i, deal in enumerate(deals):
        state = GongzhuState(deal)
        rng = np.random.default_rng(i)
        while not state.is_terminal():
            seat = state.current_player
            view = state.view(seat)
            legal = view.legal_actions()
            row = per.setdefault(state.num_played // 4 + 1, {})
            if len(legal) > 1 and state.num_played // 4 + 1 >= start:
                b = StateBatch.from_states([state])
                values = solver.card_values(b.hands, b.piles, b.trick, b.trick_len, b.leader,
                                            legal)[0]
                row.setdefault("correlated", []).append(float((values == values[0]).all()))
                row.setdefault("favours_mover", []).append(float(values.max() > 0))
                row.setdefault("draw", []).append(float(values.max() == 0))
            before = {s: count_consistent_deals(state.view(s)) for s in range(4) if s != seat}
            state.apply(greed.act(view, rng))
            for s, size in before.items():
                row.setdefault("shrinks", []).append(
                    float(count_consistent_deals(state.view(s)) < size))
                row.setdefault("log10_size", []).append(float(np.log10(float(size))))
    return {trick: {"plays": len(r["shrinks"]), **{k: float(np.mean(v)) for k, v in r.items()},
                    **({"choices": len(r["correlated"])} if "correlated" in r else {})}
            for trick, r in sorted(per.items())}


def best_cards(values: np.ndarray) -> np.ndarray:
    """[D, L] bool: each world's best cards (NaN, an unsearched card, never best)."""
    v = np.where(np.isnan(values), -np.inf, values)
    return v == v.max(axis=1, keepdims=True)


def audit_decision(agent: ScrofaZeroAgent, view, card: int, exact_from: int) -> dict:
    """One decision's figures (see the module's docstring)."""
    last = agent.last
    legal = view.legal_actions()
    j = legal.index(card)
    w, q = last.weights, last.values
    row = {"trick": len(view.history) // 4 + 1,
           "disagree": float(w @ ~best_cards(q)[:, j])}
    played = q[:, j]
    mean = float(w @ played)
    row["spread"] = float(np.sqrt(w @ (played - mean) ** 2))
    if row["trick"] >= exact_from:
        exact = agent.exact_values(view, owners_to_hands(last.sample.owners))
        mcts_best = np.argmax(np.where(np.isnan(q), -np.inf, q), axis=1)  # [D]
        worlds = np.arange(len(w))
        row["abs_error"] = float(w @ np.nanmean(np.abs(q - exact), axis=1))
        row["world_miss"] = float(w @ ~best_cards(exact)[worlds, mcts_best])
        row["world_regret"] = float(w @ (exact.max(axis=1) - exact[worlds, mcts_best]))
        scores = w @ exact  # [L] the exact weighted values
        row["decision_differs"] = float(scores[j] < scores.max())  # not an exact best (ties)
        row["decision_loss"] = float(scores.max() - scores[j])
        row["exact_disagree"] = float(w @ ~best_cards(exact)[:, int(np.argmax(scores))])
    return row


def audit(deals: np.ndarray, exact_from: int) -> list[dict]:
    """Every searched decision of the MCTS-only full player at seats 0 and 2."""
    agent = ScrofaZeroAgent(checkpoint=network_file(), endgame=EndgameConfig(trick=0))
    greed = MrGreed()
    rows = []
    for i, deal in enumerate(deals):
        state = GongzhuState(deal)
        rngs = [np.random.default_rng([i, seat]) for seat in range(4)]
        while not state.is_terminal():
            seat = state.current_player
            view = state.view(seat)
            if seat % 2 == 0:
                card = agent.act(view, rngs[seat])
                if agent.last is not None:
                    rows.append(audit_decision(agent, view, card, exact_from))
            else:
                card = greed.act(view, rngs[seat])
            state.apply(card)
    return rows


def by_trick(rows: list[dict]) -> dict:
    """Means of every figure by trick, with the standard error of each mean."""
    out: dict[int, dict] = {}
    for trick in sorted({r["trick"] for r in rows}):
        these = [r for r in rows if r["trick"] == trick]
        out[trick] = {"decisions": len(these)}
        for key in these[0]:
            if key == "trick":
                continue
            v = np.array([r[key] for r in these])
            out[trick][key] = float(v.mean())
            out[trick][key + "_se"] = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0
    return out


def report_speed(out: dict, args: argparse.Namespace) -> None:
    timing = out["speed"] = speed(load_deals(limit=args.speed_deals), args.speed_from,
                                  args.worlds)
    print(f"the solver on one core, {args.worlds} worlds per decision (Mr. Greed's games, "
          f"{args.speed_deals} deals):")
    for trick, r in timing.items():
        print(f"  trick {trick:2d}: {r['decisions']:3d} decisions, {r['ms_mean']:8.1f} ms mean "
              f"(p90 {r['ms_p90']:.1f}, max {r['ms_max']:.1f}), {r['nodes_mean']:10.0f} nodes, "
              f"{r['nodes_per_s'] / 1e6:.2f} M nodes/s")


def report_properties(out: dict, args: argparse.Namespace) -> None:
    props = out["properties"] = properties(load_deals(limit=args.properties_deals),
                                           args.properties_from)
    print(f"Long et al.'s properties ({args.properties_deals} of Mr. Greed's games, the true "
          "deal):")
    print("  trick  choices  correlated  favours mover  draw | plays  shrinks  log10 size")
    for trick, r in props.items():
        line = f"  {trick:5d}  {r.get('choices', 0):7d}"
        if "correlated" in r:
            line += f"  {r['correlated']:10.3f}  {r['favours_mover']:13.3f}  {r['draw']:4.3f}"
        else:
            line += " " * 33
        print(line + f" | {r['plays']:5d}  {r['shrinks']:7.3f}  {r['log10_size']:10.2f}")


def report_audit(out: dict, args: argparse.Namespace) -> None:
    started = time.perf_counter()
    rows = out["decisions"] = audit(load_deals(limit=args.deals), args.exact_from)
    table = out["audit"] = by_trick(rows)
    print(f"the MCTS player's decisions, {args.deals} deals against two Mr. Greeds "
          f"({time.perf_counter() - started:.0f} s):")
    print("  trick  decisions  disagree  spread | abs error  world miss  regret  "
          "differs  loss")
    for trick, r in table.items():
        line = (f"  {trick:5d}  {r['decisions']:9d}  {r['disagree']:8.3f}  {r['spread']:6.1f}")
        if "abs_error" in r:
            line += (f" | {r['abs_error']:9.1f}  {r['world_miss']:10.3f}  {r['world_regret']:6.1f}"
                     f"  {r['decision_differs']:7.3f}  {r['decision_loss']:4.1f}")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", required=True, help="where to write the figures")
    parser.add_argument("--deals", type=int, default=32, help="standard deals of the audit")
    parser.add_argument("--speed-deals", type=int, default=8, help="deals of the speed part")
    parser.add_argument("--speed-from", type=int, default=8, help="first trick timed")
    parser.add_argument("--exact-from", type=int, default=9, help="first trick solved exactly")
    parser.add_argument("--worlds", type=int, default=18, help="worlds per timed decision")
    parser.add_argument("--properties-from", type=int, default=9,
                        help="first trick whose decisions are solved for the properties")
    parser.add_argument("--properties-deals", type=int, default=32,
                        help="Mr. Greed's games of the properties part")
    parser.add_argument("--parts", default="speed,properties,audit",
                        help="which parts to run, comma-separated")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if not parts or parts - {"speed", "properties", "audit"}:
        parser.error(f"--parts {args.parts}: choose among speed, properties, audit")
    out: dict = {"settings": vars(args)}
    cpu = pin_one_core()
    torch.set_num_threads(1)
    out["cpu"] = cpu
    if "speed" in parts:
        report_speed(out, args)
    if "properties" in parts:
        report_properties(out, args)
    if "audit" in parts:
        report_audit(out, args)
    write_json_atomic(args.json, out)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
