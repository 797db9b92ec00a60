"""Whether an `--api-base` answers at all, asked once before a run starts.

A wrong or unreachable `--api-base` used to cost a whole run of retries (measured: 409 s and
636 retries, an INVALID run written into `--out`, exit 4) before anyone learnt that nothing
listened there. One plain HTTP request to the base URL's `models` listing settles it in at most
`timeout` seconds: any HTTP answer, whatever its status (401, 404, 500...), means a server is
there and the run goes on to meet it; no answer at all (refused, unknown host, timed out, not
HTTP) is bad input, said in one paragraph before anything is compiled or written.

The request goes only where the user pointed `--api-base`; it carries no key and no prompt.
"""
from __future__ import annotations

import http.client
import socket
import urllib.parse

from .models import FatalError

PREFLIGHT_TIMEOUT = 10.0  # seconds: a server that cannot answer a listing in 10 s will not serve a run


def unreachable(api_base: str, timeout: float = PREFLIGHT_TIMEOUT) -> str | None:
    """Why nothing answers HTTP at api_base (None: something does)."""
    url = urllib.parse.urlsplit(api_base)
    if url.scheme not in ("http", "https") or not url.hostname:
        return f"it is not an http:// or https:// URL (got {api_base!r})"
    try:
        port = url.port
    except ValueError:
        return f"its port is not a number (got {api_base!r})"
    conn_class = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    conn = conn_class(url.hostname, port, timeout=timeout)
    path = (url.path.rstrip("/") or "") + "/models"
    try:
        conn.request("GET", path, headers={"User-Agent": "worldspec-preflight"})
        conn.getresponse().read(65536)  # any status is an answer; read a little so the socket closes cleanly
    except socket.timeout:
        return f"it did not answer within {timeout:g} s"
    except ConnectionRefusedError:
        return f"nothing is listening at {url.hostname}:{port or (443 if url.scheme == 'https' else 80)} (connection refused)"
    except socket.gaierror as e:
        return f"its host {url.hostname!r} cannot be found ({e.strerror or e})"
    except (OSError, http.client.HTTPException) as e:
        return f"it did not answer HTTP ({type(e).__name__}: {e})"
    finally:
        conn.close()
    return None


def check_endpoint(api_base: str | None, timeout: float = PREFLIGHT_TIMEOUT) -> None:
    """Raise FatalError (bad input) when `--api-base` is given and nothing answers HTTP there."""
    if not api_base:
        return
    why = unreachable(api_base, timeout)
    if why:
        raise FatalError(
            f"--api-base {api_base} cannot be reached: {why}. Check the URL and that the server is running "
            "(an OpenAI-compatible server's base URL usually ends in /v1), then run the same command again. "
            "Nothing was run and nothing was written.")
