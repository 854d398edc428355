"""Gongzhu deals: random deals from a seed, 52-code deal lines, deal files, seat rotation.

A deal is an int array [52] of card indices (a permutation of 0..51); seat i holds the cards at
positions 13*i .. 13*i+12, exactly as in a deal line of the standard file.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from scrofazero.games.gongzhu.cards import NUM_CARDS, card_code, card_index

DEFAULT_DEALS_FILE = Path(__file__).with_name("gongzhu_std_1024.txt")
BOM = "\ufeff"  # a UTF-8 byte order mark, dropped from the start of a deal file


class DealError(ValueError):
    """A deal or deal file that cannot be used; the message names the file and line."""


def random_deal(seed_or_rng: int | np.random.Generator | None = None) -> np.ndarray:
    """A uniformly random deal [52] from a seed or a numpy Generator."""
    rng = np.random.default_rng(seed_or_rng)
    return rng.permutation(NUM_CARDS).astype(np.int64)


def check_deal(deal, where: str = "deal") -> np.ndarray:
    """Validate 52 card indices (each card exactly once); return them as int64 [52]."""
    arr = np.asarray(deal)
    if arr.shape != (NUM_CARDS,):
        raise DealError(f"{where}: a deal needs 52 cards, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise DealError(f"{where}: card indices must be integers, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= NUM_CARDS:
        raise DealError(f"{where}: card indices must lie in 0..51")
    counts = np.bincount(arr, minlength=NUM_CARDS)
    problems = []
    missing = [card_code(int(c)) for c in np.flatnonzero(counts == 0)]
    repeated = [card_code(int(c)) for c in np.flatnonzero(counts > 1)]
    if missing:
        problems.append("missing " + " ".join(missing))
    if repeated:
        problems.append("repeated " + " ".join(repeated))
    if problems:
        raise DealError(f"{where}: " + "; ".join(problems))
    return arr.astype(np.int64)


def parse_deal_line(line: str, where: str = "deal line") -> np.ndarray:
    """Parse 52 whitespace-separated card codes into a deal [52]."""
    codes = line.split()
    if len(codes) != NUM_CARDS:
        raise DealError(f"{where}: expected 52 card codes, found {len(codes)}")
    cards = []
    for k, code in enumerate(codes):
        try:
            cards.append(card_index(code))
        except ValueError as err:
            raise DealError(f"{where}: code {k + 1}: {err}") from None
    return check_deal(np.array(cards, dtype=np.int64), where)


def format_deal(deal) -> str:
    """The 52-code line of a deal."""
    return " ".join(card_code(int(c)) for c in deal)


def load_deals(path: str | os.PathLike | None = None, limit: int | None = None) -> np.ndarray:
    """Read a deal file (one deal per line, '#' comments and blank lines skipped) -> [D, 52].

    Errors name the file and the 1-based line number; a UTF-8 byte order mark at the start is
    skipped. `path=None` reads the shipped copy of the 1024 standard deals.
    """
    path = Path(path) if path is not None else DEFAULT_DEALS_FILE
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DealError(f"{path}: cannot read deal file: {err.strerror or err}") from None
    try:
        text = raw.decode("utf-8").removeprefix(BOM)  # editors on Windows may start with one
    except UnicodeDecodeError as err:
        # a bare UnicodeDecodeError names neither the file nor where the bad byte is
        line = raw.count(b"\n", 0, err.start) + 1
        raise DealError(f"{path}:{line}: not a text file (not UTF-8: byte 0x{raw[err.start]:02x} "
                        f"at offset {err.start})") from None
    deals = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        deals.append(parse_deal_line(stripped, where=f"{path}:{lineno}"))
        if limit is not None and len(deals) >= limit:
            break
    if not deals:
        raise DealError(f"{path}: no deals found")
    return np.stack(deals)


def hands_of(deal) -> list[int]:
    """The four hands of a deal as 52-bit masks."""
    hands = [0, 0, 0, 0]
    for pos, card in enumerate(deal):
        hands[pos // 13] |= 1 << int(card)
    return hands


def rotate_deal(deal, shift: int = 1) -> np.ndarray:
    """Move every hand `shift` seats on: seat i's hand goes to seat (i + shift) % 4."""
    blocks = np.asarray(deal).reshape(4, 13)
    return np.roll(blocks, shift, axis=0).reshape(NUM_CARDS)
