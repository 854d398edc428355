"""Plain HTML pages for a URL the table page cannot serve: a replay id that is not a number or
names no game, a table that is not on the server, a seat that is not 0..3, a path that does not
exist. Each says what is wrong and where to go, instead of a raw error object or a table with
live controls and nothing on it. Its look is base.css's `.problem` (the server's
Content-Security-Policy allows no inline style)."""

from __future__ import annotations

from html import escape

from fastapi.responses import HTMLResponse

# where a person can go from a refused URL
WAYS_ON = (("/", "the lobby: open a table, join a public one, or replay a recent game"),
           ("/fish", "Fish tables"),
           ("/static/help.html", "the rules of Gongzhu"))


def shown(value: str, most: int = 40) -> str:
    """`value` cut to `most` characters (a URL or a name a script sent can be very long)."""
    return value if len(value) <= most else value[:most] + "…"


def problem_page(title: str, text: str, status: int = 404) -> HTMLResponse:
    """A page that says what is wrong (`title`, `text`: plain text, escaped here) and links
    to the lobby, the Fish tables and the rules."""
    links = "".join(f'<li><a href="{href}">{escape(about)}</a></li>' for href, about in WAYS_ON)
    body = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title, quote=False)} - ScrofaZero tables</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/base.css">
</head>
<body>
<main class="problem" data-testid="problem">
<h1 data-testid="problem-title">{escape(title, quote=False)}</h1>
<p data-testid="problem-text">{escape(text, quote=False)}</p>
<p>Where to go from here:</p>
<ul>{links}</ul>
</main>
</body>
</html>
"""
    return HTMLResponse(body, status_code=status)
