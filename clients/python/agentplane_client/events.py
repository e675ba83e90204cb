"""The live event stream of one agent, /api/v1/agents/{name}/ws, as an async iterator of typed
events (the generated ``Event`` model). Written by hand: OpenAPI has no WebSockets.

What it follows (the server's README and docs/cli.md):

- a replay, then live events, each once, in ``seq`` order; ``since=<seq>`` starts after that seq
  (without it, at the current task's first event);
- the server pings every 30 s and websockets answers; websockets also pings the server, and a
  connection that stops answering is dropped;
- close codes: 4008 "fell behind, resume with since=<seq>" and a dropped connection are resumed
  from the last seq received; 4410 agent deleted, 4401 token revoked or expired, 4404 agent not
  found and 4429 too many subscribers end the stream with an ``EventStreamError``, and so does a
  refused handshake (its HTTP status and the body's ``reason``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from .models.event import Event

FELL_BEHIND = 4008
TOKEN_REVOKED = 4401
AGENT_NOT_FOUND = 4404
AGENT_DELETED = 4410
TOO_MANY_SUBSCRIBERS = 4429


class EventStreamError(Exception):
    """Why a stream ended: a close ``code`` or a refused handshake's HTTP ``status``, and the ``reason``."""

    def __init__(self, reason: str, *, code: int | None = None, status: int | None = None):
        where = f"refused: {status}" if status is not None else f"closed: {code}"
        super().__init__(f"event stream {where} {reason}")
        self.reason = reason
        self.code = code
        self.status = status


def stream_url(base_url: str, agent: str, namespace: str | None, since: int | None) -> str:
    parts = urlsplit(base_url)
    query = {k: v for k, v in (("namespace", namespace), ("since", since)) if v is not None}
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, f"/api/v1/agents/{quote(agent, safe='')}/ws", urlencode(query), ""))


async def follow_events(
    base_url: str,
    agent: str,
    *,
    namespace: str | None = None,
    since: int | None = None,
    token: str | None = None,
    retries: int = 5,
) -> AsyncIterator[Event]:
    """Follows an agent's events until the caller stops iterating or the stream ends."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    dropped = 0
    while True:
        try:
            async with connect(stream_url(base_url, agent, namespace, since), additional_headers=headers) as ws:
                while True:
                    event = Event.from_dict(json.loads(await ws.recv()))
                    since = event.seq
                    dropped = 0
                    yield event
        except InvalidStatus as err:
            raise EventStreamError(_reason(err.response.body), status=err.response.status_code) from err
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else 1006
            reason = closed.rcvd.reason if closed.rcvd else "connection dropped"
            if code == FELL_BEHIND:
                match = re.search(r"since=(\d+)", reason)
                since = int(match.group(1)) if match else since
            elif code == 1000 or code >= 4000:
                raise EventStreamError(reason, code=code) from closed
            else:
                dropped += 1
                if dropped > retries:
                    raise EventStreamError(reason, code=code) from closed
        except OSError:
            dropped += 1
            if dropped > retries:
                raise
        await asyncio.sleep(min(0.2 * 2**dropped, 5.0))


def _reason(body: bytes | None) -> str:
    try:
        reason = json.loads(body or b"{}").get("reason")
    except (ValueError, AttributeError):
        reason = None
    return reason if isinstance(reason, str) else "refused"
