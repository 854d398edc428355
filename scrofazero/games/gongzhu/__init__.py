"""Gongzhu rules: cards, scoring, deals, the single-game reference engine (rules) and the batched
state used by search (batch)."""

from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals, random_deal, rotate_deal
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView

__all__ = [
    "GongzhuState",
    "InfoView",
    "card_code",
    "card_index",
    "load_deals",
    "random_deal",
    "rotate_deal",
]
