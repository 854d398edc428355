"""A Gongzhu table whose server the test plays: the page joins a real table of the server (so
its URL is served), but its `/ws` socket is Playwright's `route_web_socket`, answered here. A
test sends the protocol messages it needs (a 13-card pile, a trick and the next card at once)
and reads what the page shows, without waiting for bots; `FakeSocket.sent` keeps what the page
sent.
"""

from __future__ import annotations

import json

HEARTS = ["H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "H10", "HJ", "HQ", "HK", "HA"]


def welcome(table: str, seat: int = 0, **fields) -> dict:
    """A welcome to `seat` of `table`: a hand of one person (unnamed) and three bots just
    started, seat 0 to lead; `fields` replace any of its fields."""
    players = [{"seat": s, "kind": "open" if s == seat else "greed",
                "name": f"open seat {s}" if s == seat else "Mr. Greed", "connected": True}
               for s in range(4)]
    msg = {"v": 1, "type": "welcome", "table": table, "game_id": 1, "status": "playing",
           "first_leader": 0, "players": players, "match_id": 1, "hand": [], "hand_number": 1,
           "hands": 1, "target": None, "totals": [0, 0], "public": False, "open_seats": [],
           "open_deal": False, "open_hands": 0,
           "leader": 0, "trick": [], "captured": [[], [], [], []], "scores": [0, 0, 0, 0],
           "team": [0, 0], "seat": seat, "match_history": [], "history": [], "ply": 0,
           "move_deadline_s": 120.0, "thinking": False, "live_thinking": False,
           "returns": None}
    msg.update(fields)
    return msg


class FakeSocket:
    """The page's /ws: answers its `join` with `on_join` (messages, in order)."""

    def __init__(self, on_join: list[dict]):
        self.on_join = on_join
        self.sent: list[dict] = []
        self.route = None

    def handle(self, route) -> None:
        self.route = route
        route.on_message(self.receive)

    def receive(self, frame) -> None:
        msg = json.loads(frame)
        self.sent.append(msg)
        if msg.get("type") == "join":
            for answer in self.on_join:
                self.send(answer)

    def send(self, msg: dict) -> None:
        self.route.send(json.dumps({"v": 1, **msg}))


def join_fake_table(page, url: str, table: str, on_join: list[dict], seat: int = 0,
                    hold_ms: int | None = None) -> FakeSocket:
    """Open seat `seat` of the server's `table` by a join link, its socket answered by a
    FakeSocket, a finished trick held `hold_ms` (else the page's own pause); returns once the
    page has taken the welcome."""
    socket = FakeSocket(on_join)
    page.route_web_socket("**/ws", socket.handle)
    page.goto(f"{url}?table={table}&seat={seat}&token=fake")
    if hold_ms is not None:
        page.evaluate(f"() => {{ window.scrofazero.trickHoldMs = {hold_ms}; }}")
    page.get_by_test_id("join-button").click()
    page.wait_for_function("() => Boolean(window.scrofazero.game)")
    return socket
