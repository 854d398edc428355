"""Tree search over batched games: protocols (game, evaluator) and batched UCB / PUCT MCTS."""

from scrofazero.search.mcts import MCTSConfig, SearchResult, run_mcts
from scrofazero.search.protocols import BatchedGame, Evaluator
from scrofazero.search.sequential import run_mcts_sequential

__all__ = ["BatchedGame", "Evaluator", "MCTSConfig", "SearchResult", "run_mcts",
           "run_mcts_sequential"]
