"""The page a person reads of a Fish game's record (GET /fish/record/ID): who sat where and what
they were dealt, every move as a sentence ("Ann asked Bob for the 5 of hearts: no"; a call with
the holders its caller named), the sets each team won and the result, with the record's JSON,
replay and transcript linked beside it.

Plain HTML made here from the record alone (a FishRecords.game dict), so it reads without a
script; its look is fish.css's (the site's Content-Security-Policy allows no inline style). The
players are named as the table page names them (static/fish.js `who`): a name seats share gets a
letter by seat order, never a seat number.
"""

from __future__ import annotations

from html import escape

from scrofazero.games.fish.cards import set_name, team_of
from scrofazero.serve.common.messages import OPEN

SUITS = {"D": ("diamonds", "\u2666"), "C": ("clubs", "\u2663"), "H": ("hearts", "\u2665"),
         "S": ("spades", "\u2660")}
RANKS = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
JOKERS = {"*S": "small joker", "*B": "big joker"}
LETTERS = "ABCDEFGH"


def card_words(code: str) -> str:
    """A card code in words, as a sentence says it: 'H5' -> 'the 5 of hearts'."""
    if code in JOKERS:
        return f"the {JOKERS[code]}"
    return f"the {RANKS.get(code[1], code[1])} of {SUITS[code[0]][0]}"


def card_short(code: str) -> str:
    """A card as the table page shows it in a list: 'HT' -> '10♥'."""
    if code in JOKERS:
        return JOKERS[code]
    return ("10" if code[1] == "T" else code[1]) + SUITS[code[0]][1]


def player_names(seats: list[dict]) -> list[str]:
    """Each seat's name (`seats`: the record's {seat, kind, name}, in seat order); a name that
    seats share gets a letter by seat order: 'random bot A', 'random bot B'."""
    names = [s["name"] for s in seats]
    return [f"{name} {LETTERS[names[:seat].count(name)]}" if names.count(name) > 1 else name
            for seat, name in enumerate(names)]


def called_team(move: dict) -> int:
    """The team a recorded call gave its set to: the caller's when right, else the other."""
    return team_of(move["seat"]) if move["success"] else 1 - team_of(move["seat"])


def move_sentence(move: dict, names: list[str]) -> str:
    """One recorded move in a sentence; a call names the set, whom the caller named for each
    card, and which team got the set."""
    who = names[move["seat"]]
    if move["kind"] == "ask":
        text = (f"{who} asked {names[move['target']]} for {card_words(move['card'])}: "
                f"{'yes' if move['success'] else 'no'}")
    else:
        named = ", ".join(f"{card_short(c)} {names[s]}" for c, s in move["holders"].items())
        text = (f"{who} called the {set_name(move['set'])} ({named}): "
                f"{'right' if move['success'] else 'wrong'}, team {called_team(move)} gets it")
    return f"{text} [{move['fallback']}]" if move["fallback"] else text


def result_line(game: dict) -> str:
    """How the game ended: the winning team and the sets, a draw, or not finished."""
    score = game["score"]
    if score is None:
        return f"Not finished ({game['status']}) after {len(game['moves'])} moves."
    if score[0] == score[1]:
        return f"A draw, {score[0]}-{score[1]}, in {len(game['moves'])} moves."
    won = int(score[1] > score[0])
    return (f"Team {won} won {score[won]}-{score[1 - won]} in {len(game['moves'])} "
            "moves.")


def _players(game: dict, names: list[str]) -> str:
    rows = "".join(
        f"<tr><td>{escape(names[s['seat']])}</td><td>{team_of(s['seat'])}</td>"
        f"<td>{'a person' if s['kind'] == OPEN else escape(s['kind']) + ' bot'}</td>"
        f"<td>{escape(' '.join(card_short(c) for c in game['deal'][s['seat']]))}</td></tr>"
        for s in game["seats"])
    return ('<table class="record-table" data-testid="fish-record-players"><thead><tr>'
            "<th>player</th><th>team</th><th>who</th><th>dealt</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _sets(game: dict, names: list[str]) -> str:
    rows = []
    for move in game["moves"]:
        if move["kind"] == "call":
            rows.append(f"<li>the {escape(set_name(move['set']))}: team {called_team(move)} "
                        f"(called {'right' if move['success'] else 'wrong'} by "
                        f"{escape(names[move['seat']])} at move {move['move']})</li>")
    return f'<ul class="record-sets">{"".join(rows)}</ul>' if rows else "<p>No set called.</p>"


def _moves(game: dict, names: list[str]) -> str:
    items = "".join(
        f'<li class="{move["kind"]}" data-testid="fish-record-move"><span class="num">'
        f'{move["move"]}</span><span>{escape(move_sentence(move, names))}</span></li>'
        for move in game["moves"])
    return f'<ol class="history record-moves">{items}</ol>'


def record_page(game: dict) -> str:
    """The whole page of the record `game` (FishRecords.game)."""
    names = player_names(game["seats"])
    gid = game["id"]
    links = " · ".join(f'<a href="{href}" data-testid="fish-record-{key}">{text}</a>'
                       for key, href, text in (
                           ("json", f"/api/fish/games/{gid}", "the record as JSON"),
                           ("replay", f"/api/fish/games/{gid}/replay", "replay (JSON)"),
                           ("transcript", f"/api/fish/games/{gid}/export", "transcript")))
    calls = "any seat, between moves" if game["calls"] == "any_time" else "own turn only"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fish game {gid} - ScrofaZero</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/base.css">
<link rel="stylesheet" href="/static/fish.css">
</head>
<body>
<header class="topbar">
  <a class="brand" href="/fish">ScrofaZero <span>Fish tables</span></a>
  <nav><a href="/fish">New Fish table</a><a href="/">Gongzhu</a></nav>
</header>
<main class="record" data-testid="fish-record">
<section class="panel">
<h1>Fish game {gid}</h1>
<p class="result" data-testid="fish-record-result">{escape(result_line(game))}</p>
<p>{game['num_players']} players (even seats team 0, odd seats team 1); calls: {calls};
played {escape(game['created_at'][:16].replace('T', ' '))} UTC.</p>
<p class="record-links">{links}</p>
</section>
<section class="panel"><h2>Players</h2>{_players(game, names)}</section>
<section class="panel"><h2>Sets</h2>{_sets(game, names)}</section>
<section class="panel"><h2>Moves</h2>{_moves(game, names)}</section>
</main>
</body>
</html>
"""
