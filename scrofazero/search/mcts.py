"""Batched UCB / PUCT Monte Carlo tree search, many roots in lockstep (docs/rules.md section 12).

`run_mcts` grows one small tree per root, all stored as arrays (per node: visits, value sum at
its mover's seat; per edge: visits, value sum at the parent mover's seat, child id); selection is
vector expressions over all roots with a Python loop over depth only, and each simulation step
sends the new leaves of every root to the evaluator in one call. Under UCB1 the first
simulations of a root visit its unvisited legal children in card order whatever the values
say, so they are all expanded in one first step (one evaluator call for every root's
children): the same statistics in fewer, larger calls. `run_mcts_sequential`
(search/sequential.py) is the plain one-root, one-leaf-at-a-time version the tests check it
against (and the speed baseline).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import numpy.typing as npt
from pydantic import Field

from scrofazero.search.protocols import BatchedGame, Evaluator, State
from scrofazero.settings import NonNegative, check_bounds, choice

SELECTIONS = ("ucb", "puct")
# Generous bounds on the budget: the trees are preallocated, so a typo would allocate until killed.
MAX_BUDGET_BASE = 1_000_000
MAX_BUDGET_PER_LEGAL = 100_000
Arrays = tuple[np.ndarray, ...]  # parallel int arrays: rows, node ids, actions


@dataclass
class MCTSConfig:
    """Search settings, the one shape used by self-play, the players and evaluate.py (hydra group
    `search`, and `scrofazero.search` of evaluate.py). Paper: UCB1, c = 30 points, budget
    0 + 2 x legal cards in training and 10 + 2 x legal cards in play (our player's default,
    agents/scrofazero_agent.py play_search, halves that over twice the deals)."""

    c_uct: NonNegative = 30.0  # UCB1 exploration constant, in points
    # simulations per root = budget_base + budget_per_legal x legal cards
    budget_base: Annotated[int, Field(ge=0, le=MAX_BUDGET_BASE)] = 0
    # simulations per legal card at the root
    budget_per_legal: Annotated[int, Field(ge=0, le=MAX_BUDGET_PER_LEGAL)] = 2
    # child selection rule: ucb (Q + c sqrt(2 ln N / n), the paper) | puct (policy-head prior)
    selection: Annotated[str, choice(*SELECTIONS)] = "ucb"
    c_puct: NonNegative = 60.0  # PUCT exploration constant, in points (selection=puct only)
    # search roots with one legal card too (self-play records all 52 plies)
    search_forced: bool = False


def check_search(config: MCTSConfig, where: str = "search") -> MCTSConfig:
    """Refuse search settings that make no sense for a player or for self-play (a zero budget
    plays the lowest card; negative or non-finite constants break the search; a huge budget
    allocates until killed), naming the setting.

    Args:
        config: the search settings to check.
        where: the settings' prefix in error messages, e.g. "search" or "scrofazero.search".

    Returns:
        `config` itself, unchanged; a bad value raises a ValueError instead.
    """
    check_bounds(config, where)
    if config.budget_base + config.budget_per_legal < 1:
        raise ValueError(f"{where}.budget_base={config.budget_base} and {where}.budget_per_legal="
                         f"{config.budget_per_legal}: the search budget would be zero")
    return config


@dataclass
class SearchResult:
    """Root statistics of B searches; Q is from the seat of the root's player to move."""

    q: np.ndarray  # [B, A] float32 mean backed-up value per root child; NaN illegal / unvisited
    visits: np.ndarray  # [B, A] int32 simulations through each root child
    action: np.ndarray  # [B] int64 argmax of q over visited children (ties -> lowest index)
    num_simulations: np.ndarray  # [B] int64 (0 for forced roots)
    num_evaluations: int  # states sent to the evaluator
    forced: np.ndarray  # [B] bool: a single legal action, played without search


def check_selection(config: MCTSConfig) -> bool:
    """True for PUCT selection; raises on an unknown rule (checked by its declared type: also
    a config built in code or changed after it was built)."""
    return bool(check_bounds(config, "search").selection == "puct")


def root_budgets(legal: np.ndarray, config: MCTSConfig) -> tuple[np.ndarray, np.ndarray]:
    """Simulations per root [B] int64 and forced flags [B] from root legal masks [B, A]; a root
    with one legal card is forced (not searched) unless config.search_forced."""
    num_legal = legal.sum(axis=1)
    if (num_legal == 0).any():
        raise ValueError(f"root {int(np.flatnonzero(num_legal == 0)[0])} is terminal")
    forced = (num_legal == 1) & (not config.search_forced)
    budget = config.budget_base + config.budget_per_legal * num_legal
    return np.where(forced, 0, np.maximum(budget, 0)).astype(np.int64), forced


# UCB1's exploration term c sqrt(2 ln N / n), as the original (docs/rules.md section 12).
UCB_LOG_FACTOR = 2.0


def log_table(max_visits: int) -> np.ndarray:
    """2 ln(n) for n = 0..max_visits [N+1] float64, computed once so that both search paths use
    bit-identical values (ln 0 is never used: a node with an expanded child has n >= 1).

    Args:
        max_visits: the largest visit count N the table must cover.
    """
    with np.errstate(divide="ignore"):
        return UCB_LOG_FACTOR * np.log(np.arange(max_visits + 1, dtype=np.float64))


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Policy prior [B, A] float64: softmax over legal actions only (illegal -> 0)."""
    x = np.where(legal, logits.astype(np.float64), -np.inf)
    x = np.exp(x - x.max(axis=1, keepdims=True))
    prior: np.ndarray = x / x.sum(axis=1, keepdims=True)
    return prior


def root_result(q_sum: np.ndarray, visits: np.ndarray, legal: np.ndarray, forced: np.ndarray,
                budget: np.ndarray, num_evaluations: int) -> SearchResult:
    """Assemble a SearchResult from root edge statistics (q_sum, visits [B, A] float64)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(visits > 0, q_sum / visits, np.nan).astype(np.float32)  # [B, A]
    seen = visits > 0
    action = np.where(seen, q, -np.inf).argmax(axis=1)
    # No visited child (forced row or zero budget): the lowest legal action.
    action = np.where(seen.any(axis=1), action, legal.argmax(axis=1)).astype(np.int64)
    return SearchResult(q, visits.astype(np.int32), action, budget.copy(), num_evaluations,
                        forced)


class _StateStore:
    """States of every tree node, addressed by flat node id.

    A state batch that is a dataclass of arrays with a leading batch axis (StateBatch) is kept
    in preallocated buffers written in place; any other batch type is grown with game.concat.
    """

    def __init__(self, game: BatchedGame, roots: State, capacity: int,
                 root_ids: np.ndarray) -> None:
        self.game = game
        self.buffers: dict[str, np.ndarray] | None = None
        if dataclasses.is_dataclass(roots) and not isinstance(roots, type) and all(
            isinstance(getattr(roots, f.name), np.ndarray)
            and getattr(roots, f.name).shape[:1] == (len(root_ids),)
            for f in dataclasses.fields(roots)
        ):
            self.buffers = {
                f.name: np.empty((capacity,) + getattr(roots, f.name).shape[1:],
                                 getattr(roots, f.name).dtype)
                for f in dataclasses.fields(roots)
            }
            self.batch = dataclasses.replace(roots, **self.buffers)  # views of the buffers
        else:
            self.batch = game.take(roots, np.zeros(0, dtype=np.int64))
            self.row = np.full(capacity, -1, dtype=np.int64)
            self.size = 0
        self.write(root_ids, roots)

    def write(self, ids: np.ndarray, states: State) -> None:
        if self.buffers is not None:
            for name, buf in self.buffers.items():
                buf[ids] = getattr(states, name)
        else:
            self.row[ids] = np.arange(self.size, self.size + len(ids))
            self.size += len(ids)
            self.batch = self.game.concat([self.batch, states])

    def take(self, ids: np.ndarray) -> State:
        rows = ids if self.buffers is not None else self.row[ids]
        return self.game.take(self.batch, rows)


class _Forest:
    """S search trees of at most M nodes each; node (root r, slot m) has flat id r * M + m."""

    def __init__(self, game: BatchedGame, roots: State, budget: np.ndarray, config: MCTSConfig,
                 puct: bool) -> None:
        self.game, self.config, self.puct = game, config, puct
        S, A = len(budget), game.num_actions
        self.M = M = int(budget.max()) + 1  # each simulation adds at most one node
        self.log = log_table(M)
        self.node_n = np.zeros(S * M, dtype=np.int64)  # simulations through the node
        self.node_w = np.zeros(S * M, dtype=np.float64)  # their value sum at the node's mover
        self.edge_n = np.zeros((S * M, A), dtype=np.int64)  # = child's node_n
        self.edge_w = np.zeros((S * M, A), dtype=np.float64)  # child's value sum, parent mover
        self.child = np.full((S * M, A), -1, dtype=np.int64)  # flat id of the child
        self.legal = np.zeros((S * M, A), dtype=bool)
        self.terminal = np.zeros(S * M, dtype=bool)
        self.mover = np.zeros(S * M, dtype=np.int64)
        self.value = np.zeros((S * M, game.num_players), dtype=np.float64)  # leaf evaluation
        self.prior = np.zeros((S * M, A), dtype=np.float64) if puct else None
        self.count = np.ones(S, dtype=np.int64)  # nodes used per tree
        root_ids = np.arange(S, dtype=np.int64) * M
        self.states = _StateStore(game, roots, S * M, root_ids)
        self.legal[root_ids] = game.legal_mask(roots)
        self.mover[root_ids] = game.current_player(roots)

    def select(self, f: np.ndarray) -> np.ndarray:
        """Action [g] to follow at non-terminal nodes f [g]."""
        n = self.edge_n[f]  # [g, A]
        legal = self.legal[f]  # [g, A]
        node_n = self.node_n[f]  # [g]
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.puct:
                assert self.prior is not None
                mean = self.node_w[f] / node_n  # [g] unvisited children take the node's mean
                q = np.where(n > 0, self.edge_w[f] / n, mean[:, None])
                bonus = self.config.c_puct * self.prior[f] * np.sqrt(node_n)[:, None] / (1 + n)
                chosen: np.ndarray = np.where(legal, q + bonus, -np.inf).argmax(axis=1)
                return chosen
            unvisited = legal & (n == 0)  # UCB1: an unvisited child scores +inf
            first: np.ndarray = unvisited.argmax(axis=1)
            has_unvisited = unvisited[np.arange(len(f)), first]
            if has_unvisited.all():
                return first
            score = self.edge_w[f] / n + self.config.c_uct * np.sqrt(
                self.log[node_n][:, None] / n)
            best: np.ndarray = np.where(n > 0, score, -np.inf).argmax(axis=1)
        return np.where(has_unvisited, first, best)

    def descend(self, act: np.ndarray) -> tuple[Arrays, Arrays, Arrays, Arrays]:
        """One selection per active tree act [G]; returns the path and where each one stopped.

        Returns (nodes, edges, stop_terminal, stop_new): nodes = (rows, flat ids) of every node
        passed, edges = (rows, parent ids, actions) of every edge taken, stop_terminal = (rows,
        ids) of simulations ending at an existing terminal node, stop_new = (rows, parent ids,
        actions) of those creating a new leaf; rows index `act`.
        """
        rows = np.arange(len(act))
        f = act * self.M
        nodes: list[Arrays] = []
        edges: list[Arrays] = []
        term: list[Arrays] = []
        new: list[Arrays] = []
        while len(rows):
            nodes.append((rows, f))
            t = self.terminal[f]
            if t.any():
                term.append((rows[t], f[t]))
                rows, f = rows[~t], f[~t]
                if not len(rows):
                    break
            a = self.select(f)
            edges.append((rows, f, a))
            nxt = self.child[f, a]
            fresh = nxt < 0
            new.append((rows[fresh], f[fresh], a[fresh]))
            rows, f = rows[~fresh], nxt[~fresh]
        return _cat(nodes, 2), _cat(edges, 3), _cat(term, 2), _cat(new, 3)

    def expand(self, act: np.ndarray, new: Arrays, evaluator: Evaluator,
               rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Create and evaluate the new leaves; returns (rows, new flat ids, values [n, P],
        number of states evaluated). rank [n]: where several leaves share a tree, each one's
        place among them (None: at most one leaf per tree, a simulation step)."""
        rows, parent, a = new
        if not len(rows):
            return rows, rows, np.zeros((0, self.game.num_players)), 0
        tree = act[rows]
        f = tree * self.M + self.count[tree]
        if rank is None:
            self.count[tree] += 1
        else:
            f += rank
            self.count += np.bincount(tree, minlength=len(self.count))
        states = self.game.step(self.states.take(parent), a)
        self.states.write(f, states)
        self.child[parent, a] = f
        term = np.asarray(self.game.is_terminal(states), dtype=bool)
        values = np.asarray(self.game.returns(states), dtype=np.float64)  # exact at terminals
        self.terminal[f] = term
        self.mover[f] = self.game.current_player(states)
        self.legal[f] = self.game.legal_mask(states)
        num_eval = 0
        if not term.all():
            live = np.flatnonzero(~term)
            sub = states if term.size == live.size else self.game.take(states, live)
            logits, v = evaluator(sub)
            values[live] = np.asarray(v, dtype=np.float32)
            num_eval = len(live)
            if self.puct:
                assert self.prior is not None
                self.prior[f[live]] = masked_softmax(np.asarray(logits), self.legal[f[live]])
        self.value[f] = values
        return rows, f, values, num_eval

    def expand_roots(self, first: np.ndarray, evaluator: Evaluator) -> int:
        """UCB1's opening simulations, all at once: tree t's root expands its first[t]
        legal children in card order (what its opening simulations do one by one, since
        an unvisited child scores +inf and ties go to the lowest card); returns the number of
        states evaluated."""
        S = len(first)
        root_ids = np.arange(S, dtype=np.int64) * self.M
        legal = self.legal[root_ids]
        nth = np.cumsum(legal, axis=1)  # 1 for a root's lowest legal card, 2 for the next...
        tree, a = np.nonzero(legal & (nth <= first[:, None]))  # by tree, then card
        parent = root_ids[tree]
        _, f, values, evaluated = self.expand(np.arange(S), (tree, parent, a), evaluator,
                                              rank=nth[tree, a] - 1)
        at_root = values[np.arange(len(f)), self.mover[parent]]
        self.node_n[root_ids] += first
        np.add.at(self.node_w, parent, at_root)  # in the sequential order of the additions
        self.edge_n[parent, a] = 1
        self.edge_w[parent, a] = at_root
        self.node_n[f] = 1
        self.node_w[f] = values[np.arange(len(f)), self.mover[f]]
        return evaluated

    def backup(self, act: np.ndarray, nodes: Arrays, edges: Arrays, stop_terminal: Arrays,
               new_leaves: Arrays) -> None:
        """Add each simulation's value vector to every node and edge on its path."""
        G = len(act)
        values = np.empty((G, self.game.num_players), dtype=np.float64)
        t_rows, t_ids = stop_terminal
        values[t_rows] = self.value[t_ids]  # a terminal node reached again: exact returns
        n_rows, n_ids, n_values = new_leaves
        values[n_rows] = n_values
        rows, f = nodes
        self.node_n[f] += 1  # flat ids on one step's paths are distinct: plain += is exact
        self.node_w[f] += values[rows, self.mover[f]]
        rows, f, a = edges
        self.edge_n[f, a] += 1
        self.edge_w[f, a] += values[rows, self.mover[f]]
        self.node_n[n_ids] = 1
        self.node_w[n_ids] = n_values[np.arange(len(n_ids)), self.mover[n_ids]]


def _cat(parts: list[Arrays], width: int) -> Arrays:
    """Concatenate a list of `width`-tuples of int arrays field by field."""
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(width))
    return tuple(np.concatenate(col) for col in zip(*parts))


def run_mcts(game: BatchedGame, evaluator: Evaluator, roots: State, config: MCTSConfig,
             rng: np.random.Generator | None = None,
             budget_scale: npt.ArrayLike | None = None) -> SearchResult:
    """Search B roots in lockstep: every simulation step runs one simulation in each tree that
    still has budget, evaluating all new non-terminal leaves in one evaluator call; under UCB1
    a first step runs each root's opening simulations (one per legal child, up to its budget)
    together.

    Ties break to the lowest action index, so the search is deterministic.

    Args:
        game: the rules, pure functions over batches of states (BatchedGame).
        evaluator: leaf evaluation, states -> (logits [n, A], values [n, P] in points).
        roots: a batch of B non-terminal states.
        config: the search settings: selection rule, budget, exploration constants.
        rng: accepted (train/selfplay.py passes its generator) but never drawn from.
        budget_scale: optional [B] factor on each root's budget, rounded up and at least one
            simulation per legal card (playout-cap randomisation's cheap searches).

    Returns:
        A SearchResult: [B, A] root statistics from each root mover's seat.
    """
    puct = check_selection(config)
    legal = np.asarray(game.legal_mask(roots), dtype=bool)  # [B, A]
    budget, forced = root_budgets(legal, config)
    if budget_scale is not None:
        scaled = np.ceil(budget * np.asarray(budget_scale, dtype=np.float64)).astype(np.int64)
        budget = np.where(forced, 0, np.maximum(scaled, legal.sum(axis=1)))
    B, A = legal.shape
    q_sum = np.zeros((B, A), dtype=np.float64)
    visits = np.zeros((B, A), dtype=np.int64)
    searched = np.flatnonzero(budget > 0)
    # UCB1: the first min(budget, legal cards) simulations of a root expand its children in
    # card order, done in one step (_Forest.expand_roots); PUCT's selection reads the prior.
    first = np.zeros(B, dtype=np.int64) if puct else np.minimum(budget, legal.sum(axis=1))
    rest = budget - first
    num_eval = 0
    if len(searched):
        order = searched[np.argsort(-rest[searched], kind="stable")]  # active trees first
        forest = _Forest(game, game.take(roots, order), budget[order], config, puct)
        if puct:
            num_eval += _evaluate_roots(forest, evaluator, game.take(roots, order))
        else:
            num_eval += forest.expand_roots(first[order], evaluator)
        for step in range(int(rest[order[0]])):
            act = np.arange(int(np.searchsorted(-rest[order], -step, side="left")))
            nodes, edges, term, new = forest.descend(act)
            n_rows, n_ids, n_values, evaluated = forest.expand(act, new, evaluator)
            num_eval += evaluated
            forest.backup(act, nodes, edges, term, (n_rows, n_ids, n_values))
        root_ids = np.arange(len(order)) * forest.M
        q_sum[order] = forest.edge_w[root_ids]
        visits[order] = forest.edge_n[root_ids]
    return root_result(q_sum, visits, legal, forced, budget, num_eval)


def _evaluate_roots(forest: _Forest, evaluator: Evaluator, roots: State) -> int:
    """PUCT: evaluate the roots once for their priors; the evaluation counts as a visit."""
    root_ids = np.arange(len(roots)) * forest.M
    logits, values = evaluator(roots)
    values = np.asarray(values, dtype=np.float32).astype(np.float64)
    assert forest.prior is not None
    forest.prior[root_ids] = masked_softmax(np.asarray(logits), forest.legal[root_ids])
    forest.value[root_ids] = values
    forest.node_n[root_ids] = 1
    forest.node_w[root_ids] = values[np.arange(len(roots)), forest.mover[root_ids]]
    return len(roots)
