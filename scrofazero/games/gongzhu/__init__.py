"""Gongzhu: cards, scoring, deals, the single-game rules engine and the batched engine."""

from .cards import card_code, card_index
from .deals import load_deals, random_deal, rotate_deal
from .rules import GongzhuState, InfoView

__all__ = [
    "GongzhuState",
    "InfoView",
    "card_code",
    "card_index",
    "load_deals",
    "random_deal",
    "rotate_deal",
]
