"""A provider's reply read under a byte cap: the HTTP client litellm's OpenAI-compatible calls use.

A server (a stranger's --api-base, a broken proxy) can send a body of any size; read whole, a 50 MB
body costs gigabytes once parsed and typed, before models.bounded_reply cuts the reply to its
characters. `cap_client` makes litellm's own client read every body as a stream and stops at MAX_BODY_BYTES (a declared
Content-Length over the cap stops it before a byte is read) with `BodyTooLarge`; it asks for an
uncompressed body, so the cap counts what is parsed. litellm takes it as `litellm.aclient_session`
(one client per event loop: an httpx client belongs to the loop it was made in).
"""
from __future__ import annotations

import asyncio
import weakref

from typing import Callable

import httpx

MAX_BODY_BYTES = 32_000_000  # one reply's body; models.MAX_REPLY_CHARS keeps 262,144 characters of a field


class BodyTooLarge(httpx.HTTPError):
    """A response body larger than the cap."""

    def __init__(self, limit: int, declared: int | None = None):
        said = f" (it declared {declared:,} bytes)" if declared is not None else ""
        super().__init__(f"the server's reply is larger than {limit:,} bytes{said}: no model reply is that large; "
                         "is --api-base the right server?")
        self.limit = limit


class CappedStream(httpx.AsyncByteStream):
    """A response's byte stream that stops past `limit` bytes."""

    def __init__(self, inner, limit: int):
        self.inner, self.limit = inner, limit

    async def __aiter__(self):
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                raise BodyTooLarge(self.limit)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def cap_client(client: httpx.AsyncClient, limit: int = MAX_BODY_BYTES) -> httpx.AsyncClient:
    """CLIENT (the one litellm builds, with its own transport and settings) reading every body under
    LIMIT bytes and asking for it uncompressed (see the module docstring)."""
    send = client.send

    async def capped_send(request, *, stream: bool = False, **kwargs):
        response = await send(request, stream=True, **kwargs)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise BodyTooLarge(limit, int(declared))
        response.stream = CappedStream(response.stream, limit)
        if not stream:
            try:
                await response.aread()
            finally:
                await response.aclose()
        return response

    client.send = capped_send
    client.headers["Accept-Encoding"] = "identity"
    return client


_CLIENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def client_for_this_loop(make: Callable[[], httpx.AsyncClient]) -> httpx.AsyncClient:
    """The capped client of the running event loop: MAKE() (litellm's own client for OpenAI-compatible
    calls) on first use, capped."""
    loop = asyncio.get_running_loop()
    client = _CLIENTS.get(loop)
    if client is None:
        client = _CLIENTS[loop] = cap_client(make())
    return client

