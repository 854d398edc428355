"""Tree search over batched games: protocols (game, evaluator) and batched UCB / PUCT MCTS."""

from scrofazero.search.mcts import MCTSConfig, SearchResult, run_mcts, run_mcts_sequential
from scrofazero.search.protocols import BatchedGame, Evaluator

__all__ = ["BatchedGame", "Evaluator", "MCTSConfig", "SearchResult", "run_mcts",
           "run_mcts_sequential"]
