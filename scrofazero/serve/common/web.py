"""The web application's parts both games share: how a refusal is answered over HTTP (the
protocol's error object with its HTTP status, a plain page for a person's browser at a wrong
address), the guards every request passes (guards.py, limits.py), the page's static files, and
how uvicorn runs the app. app.py puts them together with each game's routes.
"""

from __future__ import annotations

from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from scrofazero.serve.common.config import PlayConfig
from scrofazero.serve.common.guards import (
    OriginGuard,
    RequestRate,
    SecurityHeaders,
    allowed_hosts,
    request_timeout_protocol,
)
from scrofazero.serve.common.limits import Limits
from scrofazero.serve.common.messages import Error
from scrofazero.serve.common.pages import problem_page, shown
from scrofazero.serve.common.protocol import MAX_MESSAGE_BYTES, ProtocolError

# the page's files, both games', served under /static
STATIC = Path(__file__).parent.parent / "static"
# the HTTP status of an error code over HTTP (every other code: 400)
HTTP_STATUS = {"unknown_table": 404, "not_found": 404, "not_public": 403, "seat_taken": 409,
               "in_play": 409, "limit": 429}


def http_error(err: ProtocolError) -> JSONResponse:
    """A refusal over HTTP: the protocol's error object, with the code's HTTP status."""
    return JSONResponse(err.to_message(), status_code=HTTP_STATUS.get(err.code, 400))


def add_error_answers(app: FastAPI) -> None:
    """Every refusal of a route, the framework's own too (no such path, a query parameter of
    the wrong type), is answered with the protocol's error object."""

    @app.exception_handler(ProtocolError)
    async def refused(_request, err: ProtocolError):
        return http_error(err)

    @app.exception_handler(HTTPException)
    async def framework_refused(request: Request, err: HTTPException):
        if err.status_code == 404 and not request.url.path.startswith(("/api/", "/ws")):
            # a person's browser at a wrong address: a page that says so (the API keeps JSON)
            return problem_page("No such page", f"There is no page at "
                                f"{shown(request.url.path, 80)} on this server.")
        code = "not_found" if err.status_code == 404 else "bad_message"
        return JSONResponse(Error(code=code, message=str(err.detail)).model_dump(),
                            status_code=err.status_code, headers=err.headers)

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(_request, err: RequestValidationError):
        problem = err.errors()[0]
        name = ".".join(str(p) for p in problem["loc"][1:]) or "the request"
        message = f"{problem['loc'][0]} parameter '{name}': {problem['msg']}, got " \
                  f"{problem.get('input')!r}"
        return http_error(ProtocolError("bad_message", message[:300]))


def add_guards(app: FastAPI, cfg: PlayConfig, limits: Limits) -> None:
    """The guards every request passes (the allowed hosts and origins, the client's request
    rate, the security headers), the static files, and the answers to refusals."""
    hosts = allowed_hosts(cfg.host, cfg.allowed_hosts)
    app.add_middleware(OriginGuard, hosts=hosts, origins=cfg.allowed_origins)
    app.add_middleware(RequestRate, rate=limits.requests, cfg=cfg)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    add_error_answers(app)


def uvicorn_config(app: FastAPI, cfg: PlayConfig) -> uvicorn.Config:
    """How uvicorn runs the app: a whole request within request_timeout_s (guards.py), idle
    keep-alive connections closed after keep_alive_s, and a client's address always the peer's:
    uvicorn would take X-Forwarded-For from a local peer, so any local client could pick the
    address its per-client limits count."""
    # Messages are a few hundred bytes: compressing each cost more CPU than it saved (profiled
    # under benchmarks/serve.py). uvicorn annotates timeout_keep_alive as int but waits it as
    # seconds (loop.call_later), so a fraction works.
    return uvicorn.Config(app, log_level=cfg.log_level, ws_max_size=16 * MAX_MESSAGE_BYTES,
                          ws_per_message_deflate=False,
                          http=request_timeout_protocol(cfg.request_timeout_s),
                          timeout_keep_alive=cfg.keep_alive_s,  # type: ignore[arg-type]
                          proxy_headers=False)
