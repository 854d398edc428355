"""What the Gongzhu and Fish environments share: a turn-based AEC environment over a rules
engine, with the episode bookkeeping, the step of one move, text rendering and the usual
PettingZoo wrappers. A game supplies `_move(action)`, `_over()`, `_returns()`, `_mover()`
and `_text()`; rewards are paid once, when `_over()` first holds."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

RENDER_MODES = ("ansi", "human")


def wrapped(game: AECEnv) -> AECEnv:
    """`game` with PettingZoo's classic wrappers: illegal moves end the game (-1 to the mover),
    out-of-range actions raise, and the AEC call order is enforced."""
    game = wrappers.TerminateIllegalWrapper(game, illegal_reward=-1)
    game = wrappers.AssertOutOfBoundsWrapper(game)
    return wrappers.OrderEnforcingWrapper(game)


class TurnBasedEnv(AECEnv):
    """Agents player_0..player_{n-1}; observations {"observation": float32 [obs_size],
    "action_mask": int8 [num_actions]}; one Discrete(num_actions) action per agent."""

    def _setup(self, render_mode, num_agents: int, obs_size: int, num_actions: int,
               low: float) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {RENDER_MODES} or None, "
                             f"got {render_mode!r}")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(num_agents)]
        self.agents = list(self.possible_agents)
        obs = spaces.Box(low=low, high=1.0, shape=(obs_size,), dtype=np.float32)
        mask = spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": obs, "action_mask": mask})
                                   for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self._rng = np.random.default_rng()

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _reseed(self, seed: int | None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def _begin_episode(self) -> None:
        """Every agent in play, nothing paid, the mover selected (after the new deal)."""
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._mover()]

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        self._cumulative_rewards[agent] = 0
        self._move(int(action))
        if self._over():
            for other, value in zip(self.possible_agents, self._returns()):
                self.rewards[other] = value
                self.terminations[other] = True
        self.agent_selection = self.possible_agents[self._mover()]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None:
            return None
        text = self._text()
        if self.render_mode == "human":
            print(text)
        return text

    def close(self):
        pass
