"""What the web server checks below its routes, against careless or hostile clients.

- Host names (DNS rebinding): a request whose Host header is not an allowed host name is refused
  with 400 (starlette's TrustedHostMiddleware over `allowed_hosts`). Allowed are 127.0.0.1,
  localhost, [::1], the `host` served on (unless it is a wildcard address such as 0.0.0.0) and
  the `allowed_hosts` option; "*" allows any.
- Origins (another site's page in a visitor's browser): `OriginGuard` refuses, with 403, the
  WebSocket handshake and every request that can change something (POST, PUT, PATCH, DELETE)
  carrying an Origin header that is not allowed, and, with 415, such a request whose body is not
  JSON (a page's plain-text or form post needs no CORS preflight). Allowed origins are
  http://NAME:PORT for each allowed host name and the port the request came in on, plus the
  `allowed_origins` option; "*" allows any. A client without an Origin header (an outside bot,
  curl) is not a browser page and is let through.
- Request rates: `RequestRate` counts the HTTP requests and WebSocket handshakes of each
  connection (`connection_requests_per_s`) and of each client address, a backstop shared fairly
  between its connections (limits.py's `SharedRate`, `client_requests_per_s`): one past the
  rate waits its turn up to a second, and beyond that is refused with 429 and the protocol's
  `limit` error naming the settings.
- Pages in frames and sniffed types: `SecurityHeaders` adds a Content-Security-Policy (scripts,
  styles, images and connections from the server itself only; no framing), X-Frame-Options
  DENY and X-Content-Type-Options nosniff to every HTTP answer.
- Half-sent requests: `request_timeout_protocol` is uvicorn's HTTP protocol with a deadline: a
  connection must send a whole request, head and body, within the timeout of connecting or of
  its previous response, else it is closed. uvicorn itself times out only keep-alive
  connections that send nothing, so half a request line held a connection forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from scrofazero.serve.common.messages import Error

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_ADDRESSES = ("", "0.0.0.0", "::")  # serve on every interface: no one name
UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
DEFAULT_PORTS = {"http": 80, "https": 443}
# what the pages may load and where they may connect: the server itself only (the pages have no
# inline script or style; `data:` is the empty icon); no page may frame them
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
                           "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [(b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer")]
WS_SCHEMES = {"ws": "http", "wss": "https"}


def host_name(host: str) -> str:
    """A host or address as a Host header names it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(host: str, extra: Sequence[str]) -> list[str]:
    """The Host names the server answers to (TrustedHostMiddleware's patterns)."""
    if "*" in extra:
        return ["*"]
    names = list(LOOPBACK_HOSTS)
    if host not in WILDCARD_ADDRESSES:
        names.append(host_name(host))
    return list(dict.fromkeys(n.lower() for n in [*names, *extra]))


def check_allowed(hosts: Sequence[str], origins: Sequence[str]) -> None:
    """Refuse a malformed `allowed_hosts` or `allowed_origins` entry by name."""
    for name in hosts:
        body = name[2:] if name.startswith("*.") else name
        if name != "*" and (not body or any(c in body for c in "*/ \t") or
                            (":" in body and not body.startswith("["))):
            raise ValueError(f"allowed_hosts entries are host names such as games.example.com "
                             f"or *.example.com (no port), or *; got {name!r}")
    for origin in origins:
        if origin != "*" and not _is_origin(origin):
            raise ValueError(f"allowed_origins entries are origins such as "
                             f"https://games.example.com or http://10.0.0.5:8000, or *; "
                             f"got {origin!r}")


def _is_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        return False
    return (parts.scheme in DEFAULT_PORTS and bool(parts.hostname) and parts.path in ("", "/")
            and not parts.query and not parts.fragment and "@" not in parts.netloc)


def _host_matches(name: str, patterns: Sequence[str]) -> bool:
    return any(p == "*" or name == p or (p.startswith("*.") and name.endswith(p[1:]))
               for p in patterns)


class OriginGuard:
    """ASGI middleware: refuses a foreign browser page's WebSocket and changing requests, and a
    changing request with a body that is not JSON (see the module docstring)."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str], origins: Sequence[str]):
        self.app = app
        self.hosts = [h.lower() for h in hosts]
        self.origins = {o.lower().rstrip("/") for o in origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.refusal(scope) if scope["type"] in ("http", "websocket") else None
        if refusal is None:
            await self.app(scope, receive, send)
        else:
            status, detail = refusal
            await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, reason) for a request to refuse, else None."""
        socket = scope["type"] == "websocket"
        if not socket and scope["method"] not in UNSAFE_METHODS:
            return None
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin, scope):
            return 403, (f"a page from {origin!r} may not use this server (allowed: its own "
                         "pages and the allowed_origins option)")[:300]
        has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if not socket and has_body and media != "application/json":
            return 415, (f"the body must be JSON (Content-Type: application/json), got "
                         f"{media or 'no Content-Type'!r}")[:300]
        return None

    def origin_allowed(self, origin: str, scope: Scope) -> bool:
        origin = origin.lower().rstrip("/")
        if "*" in self.origins or origin in self.origins:
            return True
        if not _is_origin(origin):  # e.g. "null" (a sandboxed page or a file)
            return False
        parts = urlsplit(origin)
        scheme = scope.get("scheme", "http")
        server = scope.get("server")
        return (parts.scheme == WS_SCHEMES.get(scheme, scheme) and server is not None and
                (parts.port or DEFAULT_PORTS[parts.scheme]) == server[1] and
                _host_matches(host_name(parts.hostname or ""), self.hosts))


class SecurityHeaders:
    """ASGI middleware: SECURITY_HEADERS on every HTTP answer, a server error's too: starlette
    answers an exception with a 500 of its own outside every middleware, so one that reaches
    here unanswered gets its 500 here, then goes on up to be logged."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []),
                                                  *SECURITY_HEADERS]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not started:  # else the answer is under way: the connection is dropped
                await PlainTextResponse("Internal Server Error", status_code=500)(
                    scope, receive, send_with_headers)
            raise


class RequestRate:
    """ASGI middleware: the HTTP requests and WebSocket handshakes of each connection and each
    client address at most `rate` allows (a limits.SharedRate that waits up to its max_wait_s:
    per connection first, per address as a backstop shared fairly); one past it is refused
    with 429 and the `limit` error naming connection_requests_per_s and client_requests_per_s
    (`cfg`'s)."""

    def __init__(self, app: ASGIApp, rate, cfg):
        self.app = app
        self.rate = rate
        self.cfg = cfg

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            client = tuple(scope["client"]) if scope.get("client") else ("unknown", 0)
            address = client[0]
            wait = self.rate.wait(address, client)  # (address, port): one connection
            if wait is None:
                message = (f"more than {self.cfg.connection_requests_per_s:g} requests a second "
                           f"on this connection (connection_requests_per_s), or "
                           f"{self.cfg.client_requests_per_s:g} from {address} in all "
                           "(client_requests_per_s): try again shortly")
                await JSONResponse(Error(code="limit", message=message).model_dump(),
                                   status_code=429, headers={"Retry-After": "1"})(
                    scope, receive, send)
                return
            if wait:
                await asyncio.sleep(wait)
        await self.app(scope, receive, send)


def request_timeout_protocol(timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (httptools', else h11's) closing a connection that has not
    sent a whole request within `timeout_s` of connecting or of its previous response. A
    connection upgraded to a WebSocket is no longer this protocol's and is left alone."""

    # AutoHTTPProtocol is a name uvicorn binds at import time to httptools' or h11's class,
    # which mypy cannot read as a type.
    class RequestTimeoutProtocol(AutoHTTPProtocol):  # type: ignore[valid-type, misc]
        _request_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                # `cycle` is uvicorn's current request: a new one once a request head is read
                self._request_timer = self.loop.call_later(timeout_s, self._late, self.cycle)

        def _disarm(self) -> None:
            if self._request_timer is not None:
                self._request_timer.cancel()
                self._request_timer = None

        def _late(self, armed) -> None:
            self._request_timer = None
            transport = self.transport
            if transport.is_closing() or transport.get_protocol() is not self:
                return
            cycle = self.cycle
            no_head = cycle is armed
            no_body = cycle is not None and cycle.more_body and not cycle.response_complete
            if no_head or no_body:
                transport.close()

    return RequestTimeoutProtocol
