"""One game of Gongzhu through the PettingZoo environment: ScrofaZero's raw network (seats 0, 2)
against Mr. Greed (seats 1, 3). Needs the `pettingzoo` extra and the shipped network.

    python examples/pettingzoo_gongzhu.py [--seed N] [--checkpoint models/scrofazero.pt]

The environment is used as any PettingZoo AEC environment is; our players act on the seat's
InfoView (raw_env.view), and every card they choose is checked against the action mask.
Prints each team's reward and returns the final rewards {agent: reward}.
"""

import argparse
from pathlib import Path

import numpy as np

from scrofazero.agents.registry import make_agent
from scrofazero.pettingzoo import gongzhu

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "scrofazero.pt"


def play(seed: int = 0, checkpoint: str | Path = SHIPPED) -> dict:
    network = make_agent("raw", checkpoint=str(checkpoint))
    greed = make_agent("greed")
    players = {"player_0": network, "player_1": greed, "player_2": network, "player_3": greed}
    env = gongzhu.env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    final = {}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            final[agent] = reward
            env.step(None)
            continue
        card = players[agent].act(env.unwrapped.view(agent), rng)
        if not observation["action_mask"][card]:
            raise RuntimeError(f"{agent} chose card {card}, which the action mask forbids")
        env.step(card)
    env.close()
    return final


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", default=str(SHIPPED))
    args = parser.parse_args(argv)
    final = play(args.seed, args.checkpoint)
    print(f"ScrofaZero raw network (player_0 + player_2): {final['player_0']:+g}")
    print(f"Mr. Greed (player_1 + player_3): {final['player_1']:+g}")


if __name__ == "__main__":
    main()
