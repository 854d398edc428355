"""The plain search the batched one is checked against: one root, one leaf at a time, each
node a Python object (`run_mcts_sequential`). It makes the same selections, expansions and
backups as search/mcts.py's run_mcts, so their statistics are equal (tests/search/test_mcts.py),
and it is the speed baseline of the batched search.
"""

from __future__ import annotations

import numpy as np

from scrofazero.search.mcts import (
    MCTSConfig,
    SearchResult,
    check_selection,
    log_table,
    masked_softmax,
    root_budgets,
    root_result,
)
from scrofazero.search.protocols import BatchedGame, Evaluator, State


class _Node:
    """One node of the reference search: a state (batch of 1) and plain Python statistics."""

    def __init__(self, game: BatchedGame, state: State, value: np.ndarray | None,
                 prior: np.ndarray | None = None) -> None:
        self.state = state
        self.terminal = bool(game.is_terminal(state)[0])
        self.mover = int(game.current_player(state)[0])
        self.legal = np.asarray(game.legal_mask(state), dtype=bool)[0]  # [A]
        self.value = value  # [P] float64: exact returns if terminal, else the evaluation
        self.prior = prior  # [A] float64 (PUCT only)
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.value_sum = np.zeros(game.num_players, dtype=np.float64)  # [P] one per seat


def run_mcts_sequential(game: BatchedGame, evaluator: Evaluator, roots: State,
                        config: MCTSConfig) -> SearchResult:
    """The same search as run_mcts, one root after another and one evaluator call (batch of
    one) per new leaf: the obviously correct reference and the per-leaf speed baseline.

    Args:
        game: the rules, pure functions over batches of states (BatchedGame).
        evaluator: leaf evaluation, called on batches of one state.
        roots: a batch of B non-terminal states.
        config: the search settings: selection rule, budget, exploration constants.

    Returns:
        A SearchResult: [B, A] root statistics from each root mover's seat, as run_mcts's.
    """
    puct = check_selection(config)
    legal = np.asarray(game.legal_mask(roots), dtype=bool)  # [B, A]
    budget, forced = root_budgets(legal, config)
    log = log_table(int(budget.max()) + 1)
    q_sum = np.zeros(legal.shape, dtype=np.float64)
    visits = np.zeros(legal.shape, dtype=np.int64)
    counter = [0]  # states evaluated

    def evaluate(state: State) -> tuple[np.ndarray, np.ndarray]:
        logits, values = evaluator(state)
        counter[0] += 1
        return np.asarray(logits)[0], np.asarray(values, dtype=np.float32)[0].astype(np.float64)

    def new_node(state: State) -> _Node:
        if game.is_terminal(state)[0]:
            return _Node(game, state, np.asarray(game.returns(state), dtype=np.float64)[0])
        logits, value = evaluate(state)
        node = _Node(game, state, value)
        if puct:
            node.prior = masked_softmax(logits[None], node.legal[None])[0]
        return node

    for b in np.flatnonzero(budget > 0):
        root = _Node(game, game.take(roots, np.array([b])), None)
        if puct:  # the root's own evaluation gives its prior and counts as its first visit
            logits, root.value = evaluate(root.state)
            root.prior = masked_softmax(logits[None], root.legal[None])[0]
            root.visits, root.value_sum = 1, root.value.copy()
        for _ in range(budget[b]):
            path, node = [root], root
            while not node.terminal:
                if puct:
                    a = _select_puct(node, config.c_puct)
                else:
                    a = _select_ucb(node, config.c_uct, log)
                if a not in node.children:
                    node.children[a] = new_node(game.step(node.state, np.array([a])))
                    path.append(node.children[a])
                    break
                node = node.children[a]
                path.append(node)
            value = path[-1].value  # a new leaf's evaluation or a terminal's exact returns
            assert value is not None  # set for every node but a root under UCB1
            for n in path:
                n.visits += 1
                n.value_sum += value
        for a, child in root.children.items():
            q_sum[b, a] = child.value_sum[root.mover]
            visits[b, a] = child.visits
    return root_result(q_sum, visits, legal, forced, budget, counter[0])


def _select_ucb(node: _Node, c: float, log: np.ndarray) -> int:
    """Lowest-index unvisited legal child, else argmax of Q + c sqrt(2 ln N / n) (`log` holds
    2 ln N)."""
    for card in np.flatnonzero(node.legal):
        if card not in node.children:
            return int(card)
    score = np.full(len(node.legal), -np.inf)
    for a, child in node.children.items():
        q = child.value_sum[node.mover] / child.visits
        score[a] = q + c * np.sqrt(log[node.visits] / child.visits)
    return int(np.argmax(score))


def _select_puct(node: _Node, c: float) -> int:
    """argmax over legal children of Q + c P(a) sqrt(N) / (1 + n); unvisited Q = node mean."""
    assert node.prior is not None
    mean = node.value_sum[node.mover] / node.visits
    score = np.full(len(node.legal), -np.inf)
    for a in np.flatnonzero(node.legal):
        child = node.children.get(int(a))
        q, n = (child.value_sum[node.mover] / child.visits, child.visits) if child else (mean, 0)
        score[a] = q + c * node.prior[a] * np.sqrt(node.visits) / (1 + n)
    return int(np.argmax(score))
