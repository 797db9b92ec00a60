"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 (stdlib only).

    server = FakeOpenAI(responder).start()      # server.base_url -> http://127.0.0.1:PORT/v1
    server.fail_next("429", n=2)                # inject faults into the next requests
    server.fail_next("500", when=lambda body: not body.get("tools"))
    ...
    server.requests                              # every request body received, in order
    server.stop()

A responder maps a request body to {"content", "tool_calls": [(name,
arguments_json)], "usage": (prompt_tokens, completion_tokens)}; the default
(`default_responder`) is `runner_fakes.explorer_policy`; a test may set
`server.responder`, e.g. to `hostile_responder(programs, ...)`: a model that
sends what a hostile model would (programs as tool calls, lone surrogates,
replies of many megabytes). Faults: "429" (with Retry-After: 0),
"500", "503", "400", "401", "timeout" (the reply is delayed past the
client's timeout), "reset" (the connection is closed without a reply).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from runner_fakes import explorer_policy


LONE = "\ud800"  # a lone surrogate: a code point UTF-8 cannot encode


def tool_parameter(tool: dict) -> str:
    """The one argument an exploration tool takes."""
    return tool["function"]["parameters"]["required"][0]


def hostile_responder(programs, *, note: str = f"My notes {LONE} so far.", answer: str = f"UNKNOWN {LONE}",
                      padding: int = 0):
    """A model that, on the first turn of round 1, writes `note` and sends each of `programs` as a tool
    call (the note and the first program `padding` characters longer); later it stops exploring at
    once and answers `answer` to everything else. Text goes out as JSON, so a lone surrogate travels as
    the escape "\\ud800", as a real provider would send it."""
    pad = "z" * padding

    def respond(body: dict) -> dict:
        msgs, tools = body.get("messages", []), body.get("tools")
        if tools and body.get("tool_choice") != "none":
            first = msgs[-1].get("role") == "user" and "Exploration round 1 " in (msgs[-1].get("content") or "")
            if first and not any(m.get("role") == "tool" for m in msgs):
                name, param = tools[0]["function"]["name"], tool_parameter(tools[0])
                calls = [(name, json.dumps({param: p + (pad if i == 0 else "")})) for i, p in enumerate(programs)]
                return {"content": note + pad, "tool_calls": calls, "usage": (50, 20)}
            return {"content": "Done with this round.", "tool_calls": [], "usage": (50, 5)}
        return {"content": f"```\n{answer}\n```", "tool_calls": [], "usage": (50, 5)}

    return respond


class FakeOpenAI:
    def __init__(self, responder: Callable | None = None, *, latency: float = 0.0,
                 timeout_sleep: float = 3.0):
        self.responder = responder or self.default_responder
        self.latency = latency
        self.timeout_sleep = timeout_sleep
        self.requests: list[dict] = []
        self.faulted: list[tuple[str, dict]] = []  # (fault kind, body) of failed requests
        self._faults: list[list] = []  # [kind, remaining, predicate]
        self._lock = threading.Lock()
        self._n = 0
        self.httpd: ThreadingHTTPServer | None = None

    @staticmethod
    def default_responder(body: dict) -> dict:
        return explorer_policy(body.get("messages", []), body.get("tools"), body.get("tool_choice"))

    # -- control ----------------------------------------------------------------

    def fail_next(self, kind: str, n: int = 1, when: Callable[[dict], bool] | None = None) -> None:
        with self._lock:
            self._faults.append([kind, n, when])

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.faulted.clear()
            self._faults.clear()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> "FakeOpenAI":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "invalid JSON", "type": "invalid_request_error"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                fault = server._take_fault(body)
                with server._lock:
                    server.requests.append(body)
                    if fault:
                        server.faulted.append((fault, body))
                if fault:
                    self._fault(fault)
                    return
                if server.latency:
                    time.sleep(server.latency)
                out = server.responder(body)
                self._send(200, server._completion(body, out))

            def _fault(self, kind: str):
                if kind == "reset":
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                if kind == "timeout":
                    time.sleep(server.timeout_sleep)
                    try:
                        self._send(500, {"error": {"message": "too late", "type": "server_error"}})
                    except OSError:
                        pass
                    return
                status = int(kind)
                msg = {429: ("rate limit reached", "rate_limit_error"),
                       400: ("bad request: unsupported parameter", "invalid_request_error"),
                       401: ("Incorrect API key provided", "invalid_request_error")}.get(
                    status, ("internal server error", "server_error"))
                headers = {"Retry-After": "0"} if status == 429 else {}
                self._send(status, {"error": {"message": msg[0], "type": msg[1], "code": str(status)}},
                           headers)

            def _send(self, status: int, obj: dict, headers: dict | None = None):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default of 5 drops bursts of concurrent connections

            def handle_error(self, request, client_address):
                pass  # clients that gave up (timeouts, resets) are part of the script

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    # -- internals ----------------------------------------------------------------

    def _take_fault(self, body: dict) -> str | None:
        with self._lock:
            for f in self._faults:
                kind, n, when = f
                if n > 0 and (when is None or when(body)):
                    f[1] -= 1
                    if f[1] == 0:
                        self._faults.remove(f)
                    return kind
        return None

    def _completion(self, body: dict, out: dict) -> dict:
        with self._lock:
            self._n += 1
            n = self._n
        calls = [{"id": f"call_{n}_{i}", "type": "function",
                  "function": {"name": name, "arguments": args}}
                 for i, (name, args) in enumerate(out.get("tool_calls") or ())]
        msg = {"role": "assistant", "content": out.get("content")}
        if calls:
            msg["tool_calls"] = calls
        pin, pout = out.get("usage") or (10, 5)
        return {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": pin, "completion_tokens": pout, "total_tokens": pin + pout},
        }
