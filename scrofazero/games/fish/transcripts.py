"""Recorded human Fish games (docs/rules.md section 18): parse and write the
text, and replay it through fish.rules.FishState, naming every slip by file and line. Strict
mode raises TranscriptError on the first slip; tolerant mode skips or repairs what it can and
records a TranscriptIssue for each change. The shipped recordings are in recordings/.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from scrofazero.games.fish.cards import (
    card_code,
    card_id,
    hand_size,
    num_cards,
    num_sets,
    set_name,
    set_of,
    team_of,
)
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.games.fish.rules import FishState, IllegalMove, Params

RECORDINGS_DIR = Path(__file__).parent / "recordings"
_HAND = re.compile(r"([^\s{}:]+):\{([^{}]*)\}")
_SCORE = re.compile(r"^(\d+)\s+(\d+)$")
BOM = "\ufeff"  # a UTF-8 byte order mark, dropped from the start of a transcript


def recording_paths() -> list[Path]:
    """The shipped recorded games (recordings/*.txt), sorted by name."""
    return sorted(RECORDINGS_DIR.glob("*.txt"))


def recording_params(num_players: int) -> Params:
    """The rules the recorded games were played by: calls at any time, asking for a card one
    holds allowed, and that card counts as holding its set (the humans ask for a card that is
    their only one of its set)."""
    return Params(num_players=num_players, ask_held_allowed=True, ask_needs_other=False,
                  calls="any_time")


@dataclass(frozen=True)
class TranscriptIssue:
    """A slip found in a transcript and what tolerant mode did about it."""

    path: str | None
    line: int
    reason: str
    action: str

    def __str__(self) -> str:
        return f"{self.path or '<text>'}:{self.line}: {self.reason} ({self.action})"


class TranscriptError(ValueError):
    """A slip that strict mode (or an unusable deal in any mode) refuses; formats as
    `file:line: reason`."""

    def __init__(self, path: str | None, line: int, reason: str):
        super().__init__(f"{path or '<text>'}:{line}: {reason}")
        self.path, self.line, self.reason = path, line, reason


@dataclass
class Transcript:
    """One recorded game. players: initials in seating order; hands[seat]: the dealt card ids in
    recorded order; events: fish.events (Call.removed is None); lines[i]: the source line of
    events[i]; final_score: (team 0, team 1) sets as recorded, or None if missing."""

    players: tuple[str, ...]
    num_players: int
    hands: tuple[tuple[int, ...], ...]
    events: list[Event]
    lines: list[int]
    final_score: tuple[int, int] | None
    path: str | None = None
    score_line: int | None = None
    issues: list[TranscriptIssue] = field(default_factory=list)

    @classmethod
    def from_state(cls, state: FishState,
                   players: tuple[str, ...] | None = None) -> Transcript:
        """The transcript of an engine game (players default to P0, P1, ...)."""
        n = state.num_players
        players = tuple(players) if players is not None else tuple(f"P{s}" for s in range(n))
        events = [dataclasses.replace(e, removed=None) if isinstance(e, Call) else e
                  for e in state.events]
        return cls(players=players, num_players=n, hands=tuple(state.initial_hands),
                   events=events, lines=list(range(2, 2 + len(events))),
                   final_score=state.score if state.is_terminal else None,
                   score_line=2 + len(events) if state.is_terminal else None)


class _Reporter:
    """Raises on a slip in strict mode; records it as a TranscriptIssue in tolerant mode."""

    def __init__(self, path: str | None, tolerant: bool, issues: list[TranscriptIssue]):
        self.path, self.tolerant, self.issues = path, tolerant, issues

    def slip(self, line: int, reason: str, action: str) -> None:
        if not self.tolerant:
            raise TranscriptError(self.path, line, reason)
        self.issues.append(TranscriptIssue(self.path, line, reason, action))

    def fatal(self, line: int, reason: str) -> TranscriptError:
        return TranscriptError(self.path, line, reason)


class _Skip(Exception):
    """An event line that cannot be read; already reported."""


# ---- parsing

def parse_transcript(source: str | os.PathLike, *, tolerant: bool = False,
                     path: str | None = None) -> Transcript:
    """Parse a transcript from a file path or from its text (a str holding a newline or ':{').
    Strict: TranscriptError on the first slip. Tolerant: slips go to `transcript.issues` (a
    deal without 6 or 8 distinct players still raises, as nothing can be read without it). A UTF-8
    byte order mark at the start is skipped."""
    if isinstance(source, os.PathLike) or ("\n" not in source and ":{" not in source):
        path = path or str(source)
        raw = Path(source).read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            # fatal in both modes (nothing can be read), named by file and line
            line = raw.count(b"\n", 0, err.start) + 1
            raise TranscriptError(path, line, f"not a text file (not UTF-8: byte "
                                  f"0x{raw[err.start]:02x} at offset {err.start})") from None
    else:
        text = source
    text = text.removeprefix(BOM)  # else the first player's initials would start with it
    rows = [(i, raw.strip()) for i, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
    report = _Reporter(path, tolerant, [])
    if not rows:
        raise report.fatal(1, "empty transcript: the first line must be the deal")
    players, hands = _parse_deal(rows[0][0], rows[0][1], report)
    seat_of = {p: s for s, p in enumerate(players)}
    n = len(players)
    events, lines = [], []
    final_score, score_line = None, None
    for k, (number, text_line) in enumerate(rows[1:], start=2):
        score = _SCORE.match(text_line)
        if score:
            if k < len(rows):
                report.slip(number, "score line before the end of the game", "skipped line")
                continue
            final_score, score_line = (int(score[1]), int(score[2])), number
            if sum(final_score) != num_sets(n):
                report.slip(number, f"score {text_line} sums to {sum(final_score)}, not the "
                            f"{num_sets(n)} sets of a {n}-player game", "kept as recorded")
            continue
        try:
            events.append(_parse_event(number, text_line, seat_of, n, report))
            lines.append(number)
        except _Skip:
            pass
    if final_score is None:
        report.slip(rows[-1][0], "missing final score line (two numbers: team sets)",
                    "final score unknown")
    return Transcript(players=players, num_players=n, hands=hands, events=events, lines=lines,
                      final_score=final_score, path=path, score_line=score_line,
                      issues=report.issues)


def _parse_deal(number: int, line: str, report: _Reporter):
    found = _HAND.findall(line)
    players = tuple(p for p, _ in found)
    if len(players) not in (6, 8) or len(set(players)) != len(players):
        raise report.fatal(number, f"the deal line must give 6 or 8 distinct players as "
                           f"XX:{{cards}}, found {list(players)}")
    leftover = _HAND.sub("", line).strip()
    if leftover:
        report.slip(number, f"unexpected text {leftover!r} in the deal line", "ignored it")
    n = len(players)
    hands: list[list[int]] = []
    dealt: dict[int, str] = {}
    for player, cards in found:
        hand = []
        for code in _split_cards(cards):
            try:
                card = card_id(code.upper(), n)
            except ValueError as exc:
                report.slip(number, f"{player}'s hand: {exc}", f"dropped {code}")
                continue
            if card in dealt:
                report.slip(number, f"card {code} dealt twice (to {dealt[card]} and {player})",
                            f"kept it with {dealt[card]}")
                continue
            dealt[card] = player
            hand.append(card)
        hands.append(hand)
    _check_hand_sizes(number, players, hands, report)
    return players, tuple(tuple(h) for h in hands)


def _check_hand_sizes(number: int, players, hands: list[list[int]], report: _Reporter) -> None:
    n = len(players)
    size = hand_size(n)
    short = [s for s, h in enumerate(hands) if len(h) < size]
    long = [s for s, h in enumerate(hands) if len(h) > size]
    if not short and not long:
        return
    missing = sorted(set(range(num_cards(n))) - {c for h in hands for c in h})
    sizes = " ".join(f"{p}:{len(h)}" for p, h in zip(players, hands))
    reason = f"wrong hand sizes ({sizes}), each player is dealt {size}"
    if len(short) == 1 and not long and len(hands[short[0]]) + len(missing) == size:
        # the only consistent repair: the one short hand gets every undealt card
        hands[short[0]].extend(missing)
        codes = ",".join(card_code(c) for c in missing)
        report.slip(number, reason, f"gave the undealt {codes} to {players[short[0]]}")
    else:
        report.slip(number, reason, "kept as recorded; the game cannot be replayed")


def _split_cards(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _parse_event(number: int, line: str, seat_of: dict, n: int, report: _Reporter) -> Event:
    if "{" in line or "}" in line:
        return _parse_call(number, line, seat_of, n, report)
    tokens = line.split()
    if len(tokens) not in (3, 4):
        report.slip(number, f"malformed line {line!r}: an ask is 'ASKER TARGET CARD 0|1'",
                    "skipped line")
        raise _Skip
    asker, target = (_seat(number, t, seat_of, report) for t in tokens[:2])
    card = _card(number, tokens[2], n, report)
    success = _flag(number, tokens[3] if len(tokens) == 4 else None, report)
    return Ask(asker=asker, target=target, card=card, success=success)


def _parse_call(number: int, line: str, seat_of: dict, n: int, report: _Reporter) -> Call:
    head, _, rest = line.partition(" ")
    groups = _HAND.findall(rest)
    leftover = _HAND.sub(" ", rest).split()
    braces = rest.count("{") + rest.count("}")
    if not groups or braces != 2 * len(groups) or len(leftover) > 1:
        report.slip(number, f"malformed call {line!r}: a call is 'CALLER XX:{{cards}} ... 0|1'",
                    "skipped line")
        raise _Skip
    caller = _seat(number, head, seat_of, report)
    pairs = []
    for holder, cards in groups:
        seat = _seat(number, holder, seat_of, report)
        pairs += [(_card(number, code, n, report), seat) for code in _split_cards(cards)]
    sets = sorted({set_of(card) for card, _ in pairs})
    if len(sets) != 1:
        report.slip(number, f"malformed call: its cards come from {len(sets)} sets, a call "
                    "names the cards of one set", "skipped line")
        raise _Skip
    correct = _flag(number, leftover[0] if leftover else None, report)
    return Call(caller=caller, set_id=sets[0], assignment=tuple(sorted(pairs)), correct=correct)


def _seat(number: int, initials: str, seat_of: dict, report: _Reporter) -> int:
    if initials not in seat_of:
        report.slip(number, f"unknown player {initials!r} (players: {' '.join(seat_of)})",
                    "skipped line")
        raise _Skip
    return seat_of[initials]


def _card(number: int, code: str, n: int, report: _Reporter) -> int:
    try:
        return card_id(code.upper(), n)
    except ValueError as exc:
        report.slip(number, str(exc), "skipped line")
        raise _Skip from None


def _flag(number: int, token: str | None, report: _Reporter) -> bool:
    if token in ("0", "1"):
        return token == "1"
    what = "missing" if token is None else f"{token!r}"
    report.slip(number, f"bad flag {what}: expected 0 or 1",
                "read it as 0; replay sets it to the truth")
    return False


# ---- writing

def write_transcript(transcript: Transcript) -> str:
    """The transcript as text in the recorded format (calls grouped by holder)."""
    players = transcript.players
    lines = [" ".join(f"{p}:{{{','.join(card_code(c) for c in hand)}}}"
                      for p, hand in zip(players, transcript.hands))]
    for event in transcript.events:
        if isinstance(event, Ask):
            lines.append(f"{players[event.asker]} {players[event.target]} "
                         f"{card_code(event.card)} {int(event.success)}")
            continue
        by_seat: dict[int, list[str]] = {}
        for card, seat in event.assignment:
            by_seat.setdefault(seat, []).append(card_code(card))
        groups = " ".join(f"{players[s]}:{{{','.join(codes)}}}" for s, codes in by_seat.items())
        lines.append(f"{players[event.caller]} {groups} {int(event.correct)}")
    if transcript.final_score is not None:
        lines.append(f"{transcript.final_score[0]} {transcript.final_score[1]}")
    return "\n".join(lines) + "\n"


# ---- replay

@dataclass(frozen=True)
class ReplayStep:
    """One applied event: `event` as applied (flags set to the truth; Call.removed filled from
    the true holders when params.public_counts), `holders` [num_cards] the true seat of every
    card after it (-1 once its set is called), `state` a copy of the engine state after it."""

    line: int
    event: Event
    holders: tuple[int, ...]
    state: FishState


@dataclass
class ReplayResult:
    """initial_state: after the deal; state: after the last event; steps: one per applied
    event; issues: the transcript's parse issues followed by the replay's."""

    transcript: Transcript
    params: Params
    initial_state: FishState
    state: FishState
    steps: list[ReplayStep]
    issues: list[TranscriptIssue]


def replay(transcript: Transcript, params: Params | None = None, *,
           tolerant: bool = False) -> ReplayResult:
    """Replay every event through FishState (params default to the standard rules with calls
    at any time; the recordings need recording_params), checking it against the rules and its
    recorded outcome. The first asker moves first; a turn passed on by an empty hand may be
    taken by any player with cards of the receiving team. Strict: TranscriptError naming the
    line and the rule broken. Tolerant: skip an illegal event, repair a wrong flag, hand the
    turn to an out-of-turn asker; one TranscriptIssue per change. A deal that is not a full
    deal raises in both modes."""
    params = params or Params(num_players=transcript.num_players, calls="any_time")
    if params.num_players != transcript.num_players:
        raise ValueError(f"params are for {params.num_players} players, "
                         f"the transcript has {transcript.num_players}")
    report = _Reporter(transcript.path, tolerant, list(transcript.issues))
    first = next((e.asker for e in transcript.events if isinstance(e, Ask)), 0)
    try:
        state = FishState.new(params, transcript.hands, first_player=first)
    except ValueError as exc:
        raise report.fatal(1, f"the deal cannot be replayed: {exc}") from None
    initial, steps = state.clone(), []
    for event, line in zip(transcript.events, transcript.lines):
        if state.is_terminal:
            report.slip(line, "event after every set was called", "skipped line")
            continue
        after = _apply(state, event, line, transcript.players, report)
        if after is not None:
            state = after
            steps.append(ReplayStep(line, state.events[-1], state.holders, state.clone()))
    _check_end(transcript, state, report)
    return ReplayResult(transcript, params, initial, state, steps, report.issues)


def _apply(state: FishState, event: Event, line: int, players,
           report: _Reporter) -> FishState | None:
    """The state after `event` (a new object if the turn had to be moved), or None when
    tolerant mode skips it."""
    trial, moved = state, False
    if isinstance(event, Ask) and event.asker != state.current_player:
        by_rule, by_repair = _may_take_turn(state, event.asker, report.tolerant)
        if by_rule or by_repair:
            trial, moved = state.clone(), by_repair
            trial.set_turn(event.asker)
    try:
        if isinstance(event, Ask):
            applied = trial.ask(event.target, event.card, asker=event.asker)
            truth, recorded = applied.success, event.success
        else:
            applied = trial.call(event.caller, event.set_id, event.assignment)
            truth, recorded = applied.correct, event.correct
    except IllegalMove as exc:
        report.slip(line, f"{_describe(event, players)}: illegal ({exc.rule}): {exc}",
                    "skipped line")
        return None
    if moved:
        assert isinstance(event, Ask)  # only an ask's turn is moved
        report.slip(line, f"{_describe(event, players)}: out of turn (not-your-turn): it was "
                    f"{players[state.current_player]}'s turn",
                    f"gave the turn to {players[event.asker]}")
    if truth != recorded:
        name = "success" if isinstance(event, Ask) else "correct"
        report.slip(line, _flag_reason(event, truth, players),
                    f"repaired {name} flag {int(recorded)}->{int(truth)}")
    return trial


def _may_take_turn(state: FishState, asker: int, tolerant: bool) -> tuple[bool, bool]:
    """(by_rule, by_repair): may `asker` take the turn from the engine's current player?
    By rule: the published rule passes an empty-handed player's turn to "a teammate with cards", any
    of them, so right after such a pass any player with cards on the receiving team may take it.
    By repair (tolerant only, reported): any player with cards, since one out-of-turn line
    would otherwise make every later ask illegal."""
    if not 0 <= asker < state.num_players or not state.hand_counts[asker]:
        return False, False
    passed = state.turn_passed_from is not None
    by_rule = passed and team_of(asker) == team_of(state.current_player)
    return by_rule, tolerant and not by_rule


def _describe(event: Event, players) -> str:
    if isinstance(event, Ask):
        return f"{players[event.asker]} asks {players[event.target]} for {card_code(event.card)}"
    return f"{players[event.caller]} calls the {set_name(event.set_id)} set"


def _flag_reason(event: Event, truth: bool, players) -> str:
    if isinstance(event, Ask):
        held = "held" if truth else "did not hold"
        return (f"recorded success {int(event.success)}, but {players[event.target]} {held} "
                f"{card_code(event.card)}")
    return (f"recorded call flag {int(event.correct)}, but the call was "
            f"{'right' if truth else 'wrong'}")


def _check_end(transcript: Transcript, state: FishState, report: _Reporter) -> None:
    end_line = transcript.score_line or (transcript.lines[-1] if transcript.lines else 1)
    if not state.is_terminal:
        left = len(state.uncalled_sets())
        report.slip(end_line, f"the game ends with {left} sets never called",
                    "left them uncalled")
    recorded = transcript.final_score
    if recorded is not None and recorded != state.score:
        report.slip(end_line, f"recorded final score {recorded[0]} {recorded[1]}, replay gives "
                    f"{state.score[0]} {state.score[1]}", "kept the replayed score")
