"""Fish cards and sets: codes, ids, the deck for 6 and 8 players, and team membership.

Card id = set_id * 6 + position. Sets 0-3 are the low sets (2-7) of D, C, H, S; sets 4-7 the
high sets (9, T, J, Q, K, A) of D, C, H, S; set 8 is D8 C8 H8 S8 *S *B (6 players only).
6 players use ids 0..53 (9 sets, 9 cards each); 8 players ids 0..47 (8 sets, 6 cards each).
Seats 0, 2, 4, ... are team 0 ("odd" in a recording, the first listed player's); 1, 3, 5, ... team
1.
"""

from __future__ import annotations

SUITS = "DCHS"
LOW_RANKS = "234567"
HIGH_RANKS = "9TJQKA"
SET_SIZE = 6
NUM_SETS_MAX = 9
EIGHTS_SET = 8
TABLE_SIZES = (6, 8)

_EIGHTS_CODES = ("D8", "C8", "H8", "S8", "*S", "*B")


def _build_codes() -> tuple[str, ...]:
    codes = []
    for suit in SUITS:
        codes += [suit + r for r in LOW_RANKS]
    for suit in SUITS:
        codes += [suit + r for r in HIGH_RANKS]
    codes += list(_EIGHTS_CODES)
    return tuple(codes)


CARD_CODES: tuple[str, ...] = _build_codes()  # CARD_CODES[card id]
_CARD_IDS = {code: i for i, code in enumerate(CARD_CODES)}


def check_num_players(num_players: int) -> int:
    if num_players not in TABLE_SIZES:
        raise ValueError(f"Fish is played by 6 or 8 players, got {num_players!r}")
    return num_players


def num_sets(num_players: int) -> int:
    """9 sets with 6 players, 8 (no 8s-and-jokers set) with 8."""
    return 9 if check_num_players(num_players) == 6 else 8


def num_cards(num_players: int) -> int:
    return num_sets(num_players) * SET_SIZE


def hand_size(num_players: int) -> int:
    """Cards dealt to each player: 9 with 6 players, 6 with 8."""
    return num_cards(num_players) // num_players


def card_code(card: int) -> str:
    if not 0 <= card < len(CARD_CODES):
        raise ValueError(f"card id must be 0..{len(CARD_CODES) - 1}, got {card!r}")
    return CARD_CODES[card]


def card_id(code: str, num_players: int | None = None) -> int:
    """Id of a card code such as 'H9', 'ST', '*B'; with num_players, also checks that the card
    is in that table's deck (no 8s or jokers with 8 players)."""
    card = _CARD_IDS.get(code)
    if card is None:
        raise ValueError(f"unknown card {code!r}; codes are suit D/C/H/S + rank "
                         "2-9,T,J,Q,K,A, or *S / *B")
    if num_players is not None and card >= num_cards(num_players):
        raise ValueError(f"card {code} is not in the {num_players}-player deck "
                         "(8s and jokers are removed)")
    return card


def set_of(card: int) -> int:
    return card // SET_SIZE


def set_cards(set_id: int) -> range:
    return range(set_id * SET_SIZE, (set_id + 1) * SET_SIZE)


def set_name(set_id: int) -> str:
    if set_id == EIGHTS_SET:
        return "8s+jokers"
    if not 0 <= set_id < EIGHTS_SET:
        raise ValueError(f"set id must be 0..8, got {set_id!r}")
    return ("low " if set_id < 4 else "high ") + SUITS[set_id % 4]


def team_of(seat: int) -> int:
    """Team 0 = seats 0, 2, 4, ... ("odd" in a recording); team 1 = seats 1, 3, 5, ..."""
    return seat % 2


def teammates(seat: int, num_players: int) -> tuple[int, ...]:
    """Seats of `seat`'s team, `seat` included, ascending."""
    return tuple(range(seat % 2, num_players, 2))
