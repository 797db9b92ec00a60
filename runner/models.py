"""Who answers, as the protocols see it: one async model interface and its providers.

`Model.complete(request) -> Reply` is the only thing a protocol calls (through
runtime.Runtime.call). Here:

* the records of a conversation turn: `Request`, `Reply`, `ToolCall`, `Usage`;
* provider errors: `TransientError` (429, 5xx, timeouts, connection errors:
  retried by `call_with_retries` under a `RetryPolicy`, with tenacity: our policy computes each
  wait, honouring a server's Retry-After; every retry is reported before its wait, so the
  runtime logs it, and a call whose attempts are spent is a LostError the runtime counts), `FatalError` (401,
  404, ...: the run stops with a readable message), `RejectedError` (400, 413:
  this one request is refused; a milestone answer scores zero), `LostError` (retries spent);
* `LitellmModel`: any litellm model string (litellm is imported on the first
  call, so `check`/`probe`/built-in runs never pay for it); what it sends is
  UTF-8 text (`sendable`: a lone surrogate a model wrote becomes U+FFFD on the
  way back to the provider; the log and the cache keep it as it was);
* `bounded_reply`: a reply made well typed and cut to MAX_REPLY_CHARS before
  anything sees it; `failed_reply`: what replaces a reply that crashed a run;
* `ScriptedModel`: a function of the request, for tests and benchmarks.

The built-in agents (oracle, manual, memorise, replay, strategies) are in agents.py.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import re
from types import MappingProxyType
from typing import Any, Awaitable, Callable, Mapping

import attrs
import tenacity

from worldspec import safejson

from . import httpcap

# ----------------------------------------------------------------------------
# Requests and replies


@attrs.frozen
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, exactly as the model produced it

    def to_json(self) -> dict:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_json(cls, d: dict) -> "ToolCall":
        fn = d.get("function") or {}
        return cls(id=str(d.get("id") or ""), name=str(fn.get("name") or ""),
                   arguments=fn.get("arguments") if isinstance(fn.get("arguments"), str)
                   else json.dumps(fn.get("arguments") or {}))


@attrs.frozen
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@attrs.frozen(hash=False)
class Reply:
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    finish_reason: str = ""
    # reasoning state a provider returns and wants back (kept, never flattened)
    reasoning_content: str | None = None
    thinking_blocks: tuple | None = None

    def message(self, *, with_tool_calls: bool = True) -> dict:
        """The assistant message to append to a conversation."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if with_tool_calls and self.tool_calls:
            msg["tool_calls"] = [tc.to_json() for tc in self.tool_calls]
        if self.reasoning_content:
            msg["reasoning_content"] = self.reasoning_content
        if self.thinking_blocks:
            msg["thinking_blocks"] = list(self.thinking_blocks)
        if msg["content"] is None and "tool_calls" not in msg:
            msg["content"] = ""
        return msg

    def to_json(self) -> dict:
        d: dict[str, Any] = {
            "content": self.content,
            "tool_calls": [tc.to_json() for tc in self.tool_calls],
            "usage": {"input_tokens": self.usage.input_tokens,
                      "output_tokens": self.usage.output_tokens},
            "finish_reason": self.finish_reason,
        }
        if self.reasoning_content:
            d["reasoning_content"] = self.reasoning_content
        if self.thinking_blocks:
            d["thinking_blocks"] = list(self.thinking_blocks)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Reply":
        u = d.get("usage") or {}
        tb = d.get("thinking_blocks")
        return cls(
            content=d.get("content"),
            tool_calls=tuple(ToolCall.from_json(t) for t in d.get("tool_calls") or ()),
            usage=Usage(int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0)),
            finish_reason=d.get("finish_reason") or "",
            reasoning_content=d.get("reasoning_content"),
            thinking_blocks=tuple(tb) if tb else None,
        )


MAX_REPLY_CHARS = 262_144  # characters of one reply (content, reasoning, tool-call arguments) that are kept


def _text(value) -> str | None:
    """A provider's text field as a str (content given as parts is joined; anything else is shown)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in value)
    return str(value)


def _cut(text: str, keep: int, total: int) -> str:
    notice = (f"\n[worldspec: this reply was {total} characters; it was cut to {MAX_REPLY_CHARS}, "
              f"and this part to its first {keep}]")
    return text[:keep] + notice


def _cut_arguments(arguments: str, keep: int, total: int) -> str:
    """Tool-call arguments cut to about `keep` characters, still a JSON object when they were one."""
    try:
        args = safejson.loads(arguments)
    except ValueError:
        args = None
    if isinstance(args, dict) and all(isinstance(v, str) for v in args.values()):
        share = max(0, keep // max(1, len(args)) - 200)
        out = json.dumps({k: _cut(v, share, total) if len(v) > share else v for k, v in args.items()},
                         ensure_ascii=False)
        if len(out) <= keep + 200 * len(args):
            return out
    return _cut(arguments, keep, total)


def bounded_reply(reply: "Reply", cap: int = MAX_REPLY_CHARS) -> tuple["Reply", int]:
    """(the reply with well-typed fields and at most about `cap` characters, characters dropped).

    Over the cap, the longest fields are cut to one common length (each with a notice saying so)
    so that their sum fits; reasoning blocks over the cap are dropped. The world, the log and the
    cache only ever see the bounded reply."""
    calls = tuple(ToolCall(id=_text(tc.id)[:256] if tc.id else "", name=(_text(tc.name) or "")[:256],
                           arguments=_text(tc.arguments) or "") for tc in reply.tool_calls)
    content, reasoning = _text(reply.content), _text(reply.reasoning_content)
    blocks = reply.thinking_blocks
    fields = [content or "", reasoning or "", *(c.arguments for c in calls)]
    total = sum(map(len, fields))
    if blocks and len(json.dumps(list(blocks), default=str)) > cap:
        blocks = None
    if total <= cap:
        fixed = attrs.evolve(reply, content=content, reasoning_content=reasoning, tool_calls=calls,
                             thinking_blocks=blocks)
        return fixed, 0
    level, left, n = cap, cap, len(fields)  # water-filling: the largest L with sum(min(len, L)) <= cap
    for i, size in enumerate(sorted(map(len, fields))):
        if size * (n - i) > left:
            level = left // (n - i)
            break
        left -= size
    cut = lambda t: t if t is None or len(t) <= level else _cut(t, level, total)  # noqa: E731
    calls = tuple(attrs.evolve(c, arguments=_cut_arguments(c.arguments, level, total))
                  if len(c.arguments) > level else c for c in calls)
    kept = sum(len(f[:level]) for f in fields)
    return attrs.evolve(reply, content=cut(content), reasoning_content=cut(reasoning), tool_calls=calls,
                        thinking_blocks=blocks), total - kept


def failed_reply(error: str) -> "Reply":
    """What replaces a reply that could not be processed (a resumed run gets this instead)."""
    return Reply(content=f"[worldspec: this reply could not be processed and was dropped ({error})]",
                 finish_reason="failed")


@attrs.frozen(hash=False)
class Request:
    """One model request. Only messages/tools/tool_choice/settings reach a provider.

    `purpose` ("explore", "rules", "task:<id>") and `meta` (trajectory, t,
    step, log bookkeeping) are never sent. `answer_index` and `sample` (the
    identity of an independent sample: condition, trajectory, milestone) are
    part of the cache key, so three answers, or two trajectories that start
    from the same history, are never collapsed into one.
    """

    messages: tuple[dict, ...]
    tools: tuple[dict, ...] | None = None
    tool_choice: str | None = None
    settings: dict = attrs.field(factory=dict)
    answer_index: int = 0
    purpose: str = "explore"
    sample: str = ""
    meta: dict = attrs.field(factory=dict)


class ModelError(Exception):
    """A provider failure (never a wrong answer)."""


class TransientError(ModelError):
    """429, 5xx, timeout, connection reset: worth retrying."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class FatalError(ModelError):
    """400, 401, unknown model...: retrying cannot help; the run stops."""


class RejectedError(FatalError):
    """400/413: the provider refused this one request (context too long, content filter, bad
    request). Retrying it cannot help, but other requests may succeed: `reason` says which."""

    def __init__(self, message: str, reason: str = "bad_request"):
        super().__init__(message)
        self.reason = reason  # "context_window" | "content_policy" | "bad_request"


class LostError(ModelError):
    """Retries exhausted on transient errors: the call is lost to infrastructure."""


class Model:
    """Base class: `name` labels the system in reports; `model_id` enters the
    cache key (`api_base`, where it is reached, does not: cache.request_key);
    `cacheable` says whether replies may be stored in the on-disk response
    cache (built-in agents are free)."""

    name: str = "model"
    model_id: str = "model"
    api_base: str | None = None
    settings: Mapping = MappingProxyType({})  # generation settings of every request (part of the cache key)
    cacheable: bool = False
    # whether the milestone protocol asks a turn with nothing to measure again (protocols/reasks.py);
    # a built-in agent or a replay gives the same reply to the same question, so asking again adds nothing
    reasks: bool = True
    # requests in flight at once for this model (None: the run's default)
    max_connections: int | None = None

    async def complete(self, request: Request) -> Reply:  # pragma: no cover
        raise NotImplementedError


# ----------------------------------------------------------------------------
# Retries


@attrs.frozen
class RetryPolicy:
    max_attempts: int = 4  # one slow provider costs minutes per call, not hours
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.5  # delay is scaled by a uniform factor in [1-jitter, 1]

    def delay(self, attempt: int, retry_after: float | None = None, rng=random) -> float:
        d = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        d *= 1.0 - self.jitter * rng.random()
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay))
        return d


async def call_with_retries(
    fn: Callable[[], Awaitable[Reply]],
    policy: RetryPolicy,
    on_retry: Callable[[int, TransientError, float], None] | None = None,
) -> Reply:
    """Run fn, retrying TransientError with exponential backoff and jitter (tenacity's AsyncRetrying).

    Every retry is reported to `on_retry(attempt, error, delay)` before its wait (the runtime logs
    it); FatalError propagates at once; after `policy.max_attempts` transient failures a LostError
    is raised (the caller records the loss)."""
    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception()
        return policy.delay(state.attempt_number, getattr(error, "retry_after", None))

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_retry is not None:
            on_retry(state.attempt_number, state.outcome.exception(), state.next_action.sleep)

    def lost(state: tenacity.RetryCallState):
        error = state.outcome.exception()
        raise LostError(f"gave up after {state.attempt_number} attempts: {error}") from error

    retrying = tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception_type(TransientError), stop=tenacity.stop_after_attempt(policy.max_attempts),
        wait=wait, before_sleep=before_sleep, retry_error_callback=lost, sleep=asyncio.sleep)
    return await retrying(fn)


# ----------------------------------------------------------------------------
# litellm


_TRANSIENT_NAMES = {
    "RateLimitError", "InternalServerError", "ServiceUnavailableError",
    "BadGatewayError", "Timeout", "APIConnectionError", "APITimeoutError",
    "TimeoutError", "ConnectionError", "ConnectionResetError",
}


def cause_named(exc: BaseException | None, name: str) -> BaseException | None:
    """The exception of class NAME an exception was raised from (litellm and the SDK wrap what they catch)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if type(exc).__name__ == name:
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def classify_provider_error(exc: BaseException) -> ModelError:
    """Map a provider exception to TransientError or FatalError."""
    big = cause_named(exc, "BodyTooLarge")  # httpcap's: a server whose body passed the cap; asking again won't help
    if big is not None:
        return RejectedError(str(big), "too_large")
    status = getattr(exc, "status_code", None)
    try:
        status = int(status) if status is not None else None
    except (TypeError, ValueError):
        status = None
    names = {c.__name__ for c in type(exc).__mro__}
    text = " ".join(str(exc).split())
    if len(text) > 400:
        text = text[:400] + "..."
    label = f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "")
    message = f"{label}: {text}"
    retry_after = None
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if headers is not None:
        try:
            ra = headers.get("retry-after")
            retry_after = float(ra) if ra is not None else None
        except (TypeError, ValueError, AttributeError):
            retry_after = None
    if "missing credentials" in text.lower() or "api_key client option must be set" in text.lower():
        # litellm reports a missing key as an HTTP 500: no retry will ever fix it
        return FatalError("no API key for this provider: set its key in the environment (e.g. "
                          f"OPENAI_API_KEY for openai/ models): {message}")
    if status is not None:
        if status in (408, 409, 429) or status >= 500:
            return TransientError(message, retry_after)
        if status in (400, 413):
            low = " ".join(names).lower() + " " + text.lower()
            reason = ("context_window" if "contextwindow" in low or "context length" in low
                      or "context_length" in low or "context window" in low else
                      "content_policy" if "contentpolicy" in low or "content_filter" in low else "bad_request")
            return RejectedError(_fatal_hint(status, message), reason)
        if status in (401, 403, 404, 422):
            return FatalError(_fatal_hint(status, message))
    if names & _TRANSIENT_NAMES or isinstance(exc, (asyncio.TimeoutError, ConnectionError, OSError)):
        return TransientError(message, retry_after)
    return FatalError(message)


def _fatal_hint(status: int, message: str) -> str:
    hint = {
        400: "the provider rejected the request (check the model name and settings)",
        401: "authentication failed (is the API key for this provider set in the environment?)",
        403: "permission denied for this model or key",
        404: "model or endpoint not found (check --model and --api-base)",
        422: "the provider could not process the request",
    }.get(status, "")
    return f"{hint}: {message}" if hint else message


REQUEST_TIMEOUT = 120.0  # seconds one model request may take

_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(obj):
    """A request's content with every lone surrogate (which UTF-8, and so HTTP JSON, cannot carry)
    replaced by U+FFFD; untouched, and not copied, when there is none."""
    if isinstance(obj, str):
        return _SURROGATE.sub("\ufffd", obj) if _SURROGATE.search(obj) else obj
    if isinstance(obj, dict):
        return {k: sendable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sendable(v) for v in obj]
    return obj


class LitellmModel(Model):
    """Any litellm model string; `api_base` for an OpenAI-compatible server."""

    cacheable = True

    def __init__(self, model: str, api_base: str | None = None, settings: dict | None = None,
                 timeout: float = REQUEST_TIMEOUT, name: str | None = None):
        self.model_id = model
        self.name = name or model
        self.api_base = api_base
        self.settings = dict(settings or {})
        self.timeout = timeout

    def check_environment(self) -> None:
        """Raise FatalError, before a run starts, when the provider's API key is not in the environment
        (litellm's validate_environment; a model behind --api-base or given an api_key needs none)."""
        if self.api_base or "api_key" in self.settings:
            return
        try:
            found = _import_litellm().validate_environment(model=self.model_id)
        except Exception:  # noqa: BLE001 - a model litellm cannot place is the provider's to refuse
            return
        # only keys: a provider's missing *_API_BASE has a default (ollama: localhost)
        keys = [k for k in found.get("missing_keys") or () if "KEY" in k or "TOKEN" in k]
        if keys and not found.get("keys_in_environment"):
            names = " or ".join(keys)
            raise FatalError(
                f"--model {self.model_id} needs {names} in the environment, and it is not set. Set it "
                f"(export {keys[0]}=...) and run the same command again; or point --api-base at an "
                "OpenAI-compatible server; or leave out --model to run the built-in agents (no key, "
                "no network). Nothing was run and nothing was written.")

    async def complete(self, request: Request) -> Reply:
        litellm = _import_litellm()
        kwargs: dict[str, Any] = dict(self.settings)
        kwargs.update(request.settings)
        if request.tools:
            kwargs["tools"] = list(request.tools)
            if request.tool_choice:
                kwargs["tool_choice"] = request.tool_choice
        if self.api_base:
            kwargs["api_base"] = self.api_base
            if self.model_id.startswith("openai/") and "api_key" not in kwargs \
                    and not os.environ.get("OPENAI_API_KEY"):
                # a local OpenAI-compatible server usually wants no key, but the SDK insists on one
                kwargs["api_key"] = "no-key"
        # every OpenAI-compatible reply is read under httpcap's byte cap (litellm builds its SDK client,
        # one per event loop, with this session)
        litellm.aclient_session = httpcap.client_for_this_loop(lambda: litellm_default_client(litellm))
        try:
            resp = await litellm.acompletion(
                model=self.model_id, messages=sendable(list(request.messages)),
                num_retries=0, max_retries=0, timeout=self.timeout, **kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # provider errors of every shape
            raise classify_provider_error(e) from e
        return reply_from_openai(resp)


_LITELLM = None


def _import_litellm():
    """Import litellm on first use, offline: no cost-map download."""
    global _LITELLM
    if _LITELLM is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        import litellm  # noqa: PLC0415 — lazy on purpose

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        # adds a dummy tool where a provider insists on one when history holds tool calls
        litellm.modify_params = True
        _LITELLM = litellm
    return _LITELLM


def litellm_default_client(litellm):
    """The HTTP client litellm builds for OpenAI-compatible calls when it is given none."""
    litellm.aclient_session = None
    return litellm.llms.openai.common_utils.BaseOpenAILLM.get_async_http_client()


def reply_from_openai(resp: Any) -> Reply:
    """Read a chat-completion response (litellm ModelResponse or plain dict)."""
    get = (lambda o, k, d=None: o.get(k, d)) if isinstance(resp, dict) else \
        (lambda o, k, d=None: getattr(o, k, d) if not isinstance(o, dict) else o.get(k, d))
    choices = get(resp, "choices") or []
    if not choices:
        raise TransientError("provider returned no choices")
    choice = choices[0]
    msg = get(choice, "message") or {}
    calls = []
    for i, tc in enumerate(get(msg, "tool_calls") or ()):
        fn = get(tc, "function") or {}
        args = get(fn, "arguments")
        if not isinstance(args, str):
            args = json.dumps(args or {})
        calls.append(ToolCall(id=str(get(tc, "id") or f"call_{i}"),
                              name=str(get(fn, "name") or ""), arguments=args))
    usage = get(resp, "usage") or {}
    tb = get(msg, "thinking_blocks")
    if tb:
        tb = tuple(b if isinstance(b, dict) else dict(b) for b in tb)
    return Reply(
        content=get(msg, "content"),
        tool_calls=tuple(calls),
        usage=Usage(int(get(usage, "prompt_tokens") or 0), int(get(usage, "completion_tokens") or 0)),
        finish_reason=str(get(choice, "finish_reason") or ""),
        reasoning_content=get(msg, "reasoning_content") or None,
        thinking_blocks=tb or None,
    )


# ----------------------------------------------------------------------------
# Scripted


class ScriptedModel(Model):
    """Replies computed by a function of the request (sync or async)."""

    def __init__(self, fn: Callable[[Request], Reply | Awaitable[Reply]], name: str = "scripted",
                 cacheable: bool = False, latency: float = 0.0):
        self.fn = fn
        self.name = self.model_id = name
        self.cacheable = cacheable
        self.latency = latency
        self.calls = 0

    async def complete(self, request: Request) -> Reply:
        self.calls += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        out = self.fn(request)
        if asyncio.iscoroutine(out):
            out = await out
        return out
