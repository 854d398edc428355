"""Deals: random deals, deal lines, deal files and rotation.

Invariants: a deal is a permutation of the 52 cards, the same seed gives the same deal; the
shipped standard file has 1024 valid deals; malformed lines, and a binary (not UTF-8) file,
name the file and line number; missing or repeated cards are named; rotation moves seat i's
hand to seat i+1.
"""

import numpy as np
import pytest

from scrofazero.games.gongzhu.cards import card_code
from scrofazero.games.gongzhu.deals import (
    DealError,
    check_deal,
    format_deal,
    hands_of,
    load_deals,
    parse_deal_line,
    random_deal,
    rotate_deal,
)


def test_random_deal_is_seeded_permutation():
    a, b = random_deal(7), random_deal(7)
    assert sorted(a.tolist()) == list(range(52))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, random_deal(8))


def test_standard_file():
    deals = load_deals()
    assert deals.shape == (1024, 52)
    for deal in deals:
        assert sorted(deal.tolist()) == list(range(52))
    first = "H4 DJ C3 C6 D7 SJ C10 D10 D3 D5 SA HA H7"
    assert format_deal(deals[0]).startswith(first)


def test_line_round_trip():
    deal = random_deal(3)
    assert np.array_equal(parse_deal_line(format_deal(deal).lower()), deal)


def test_bad_file_names_line(tmp_path):
    good = format_deal(random_deal(1))
    bad = good.replace("SQ", "SX")
    path = tmp_path / "deals.txt"
    path.write_text(f"# header\n{good}\n\n{bad}\n")
    with pytest.raises(DealError, match=r"deals\.txt:4: code \d+: unknown card code 'SX'"):
        load_deals(path)


def test_short_line_and_missing_repeated():
    deal = random_deal(2)
    codes = format_deal(deal).split()
    with pytest.raises(DealError, match="expected 52 card codes, found 51"):
        parse_deal_line(" ".join(codes[:51]))
    lost, dup = codes[5], codes[6]
    codes[5] = dup
    with pytest.raises(DealError, match=f"missing {lost}; repeated {dup}"):
        parse_deal_line(" ".join(codes))
    with pytest.raises(DealError, match="52 cards"):
        check_deal(deal[:40])


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DealError, match="cannot read"):
        load_deals(tmp_path / "nope.txt")
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(DealError, match="no deals"):
        load_deals(tmp_path / "empty.txt")


def test_binary_file_is_named(tmp_path):
    path = tmp_path / "deals.bin"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.raises(DealError, match=r"deals\.bin:1: not a text file \(not UTF-8"):
        load_deals(path)
    # a bad byte further down names its line
    line = format_deal(random_deal(0))
    path.write_bytes(f"# deals\n{line}\n".encode() + b"\xff\n")
    with pytest.raises(DealError, match=r"deals\.bin:3: not a text file"):
        load_deals(path)


def test_rotation_and_hands():
    deal = random_deal(4)
    hands = hands_of(deal)
    rotated = hands_of(rotate_deal(deal, 1))
    assert [rotated[(i + 1) % 4] for i in range(4)] == hands
    assert np.array_equal(rotate_deal(rotate_deal(deal, 1), 3), deal)
    assert all(bin(h).count("1") == 13 for h in hands)
    assert card_code(int(deal[13])) in [card_code(c) for c in range(52) if hands[1] >> c & 1]
