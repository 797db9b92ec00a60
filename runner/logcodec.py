"""The compact encoding of run-log lines (log_version 2): what a line says once is never spelled again.

A run log is written as events happen, and most of what an event holds was already written: a
request repeats its conversation (every earlier message), a reply repeats its request's fields,
a message repeats the feedback or the reply it carries. Written out in full (log_version 1) a
96-box Oracle run at 20@2 took over a gigabyte, quadratic in the length of its conversations.
Version 2 writes each event as the same JSON object with what an earlier line said replaced by a
pointer to it, and `Decoder` (which log.read_events runs on every line) restores the event exactly:
`Decoder.decode(Encoder.encode(e)) == e` after JSON's own round trip.

- A text of at least `MIN_REF` characters that an earlier line holds is `{"$r": DIGEST}` (DIGEST:
  96 bits of BLAKE2b of its UTF-8); one that holds an earlier text of its conversation (a message
  that quotes the box's feedback, a tool call that quotes the reply) is `{"$s": [part, ...]}`, its
  literal parts and references in order.
- A request's messages that begin like its conversation's previous request's are
  `"$shared": N` (the first N of those) plus the rest.
- A reply (and a retry, loss, rejection or error of a call) whose call fields (system, conv,
  condition, trajectory, t, step, purpose, answer_index) are its pending request's is `"$asked": 1`
  without them; a request's or reply's `key` that its id spells (`req:KEY`, `reply:KEY`) is `"$key": 1`;
  a message's id that its conversation and index spell (`msg:CONV:INDEX`) is `"$id": 1`.
- A key of the event's own that begins with `$` is written with one more `$`.

The encoder knows only what it wrote itself (a resumed run starts afresh, and a write that failed
forgets everything), so every pointer it writes names a line the reader has read. The reader registers
every text of every line it reads, so it knows at least as much.
"""
from __future__ import annotations

import base64
import hashlib
import json
from collections import defaultdict, deque

MIN_REF = 48  # characters of a text worth a pointer (a pointer costs about 25)
RECENT = 8  # texts of a conversation looked for inside a new text
SPLICES = 2  # levels of splicing: a text may quote up to 3 earlier ones
REF, SPLICE = "$r", "$s"
SHARED, ASKED, KEYED, DERIVED_ID = "$shared", "$asked", "$key", "$id"
CALL_FIELDS = ("system", "conv", "condition", "trajectory", "t", "step", "purpose", "answer_index")
KEY_IDS = {"request": "req:", "reply": "reply:"}  # event type -> the id prefix its key follows
ASKED_TYPES = ("reply", "retry", "lost", "rejected", "error")  # events of one call, after its request


class CodecError(ValueError):
    """A version-2 line that does not decode (a pointer to nothing, a marker of the wrong shape)."""


def digest(text: str) -> str:
    """The name of a text in pointers."""
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def texts(value, out: list) -> list:
    """Every text of at least MIN_REF characters among VALUE's values (not its keys), in order."""
    if isinstance(value, str):
        if len(value) >= MIN_REF:
            out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            texts(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            texts(v, out)
    return out


def same(a, b) -> bool:
    """Equal as JSON (so 1 and True, or 1 and 1.0, are not the same)."""
    return a is b or json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def call_fields(event: dict) -> dict:
    return {f: event[f] for f in CALL_FIELDS if f in event}


def conv_of(event: dict):
    """The conversation an event's pointers and shared messages are kept under."""
    conv = event.get("conv")
    return conv if isinstance(conv, str) else None


def follow_calls(codec, event: dict, conv) -> None:
    """Keep CODEC's view of the calls in flight: a request's messages and fields, until its reply."""
    typ, key = event.get("type"), event.get("key")
    if typ == "request" and isinstance(event.get("messages"), list):
        codec.last_request[conv] = event["messages"]
        if isinstance(key, str):
            codec.asked[key] = call_fields(event)
    elif typ == "reply" and isinstance(key, str):
        codec.asked.pop(key, None)


def unshared(event: dict, n: int) -> dict:
    """EVENT without the first N messages of its request (their texts are known from the request before)."""
    return {**event, "messages": event["messages"][n:]} if n else event


def escape(key):
    return "$" + key if isinstance(key, str) and key.startswith("$") else key


class Encoder:
    """Writes version-2 lines: `encode(event)` gives the object to write, `wrote(event)` after it is written."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Forget what was written (a write failed: the line may be cut, and nothing may point into it)."""
        self.known: set[str] = set()
        self.recent: dict = defaultdict(lambda: deque(maxlen=RECENT))  # conv -> [(text, digest)]
        self.last_request: dict = {}  # conv -> the messages its last request logged
        self.asked: dict = {}  # request key -> its call fields, until its reply is written
        self.shared = 0  # messages the last request encoded shares with its conversation's previous one

    def encode(self, event: dict) -> dict:
        """The object to write for EVENT."""
        self.shared = 0
        typ, conv = event.get("type"), conv_of(event)
        out = {escape(k): v for k, v in event.items()}
        key = event.get("key")
        if typ in KEY_IDS and isinstance(key, str) and event.get("id") == KEY_IDS[typ] + key:
            del out["key"]
            out[KEYED] = 1
        if typ == "request" and isinstance(event.get("messages"), list):
            prev, msgs = self.last_request.get(conv), event["messages"]
            n = 0
            if prev is not None:
                while n < len(prev) and n < len(msgs) and same(prev[n], msgs[n]):
                    n += 1
            if n:
                out["messages"] = msgs[n:]
                out[SHARED] = n
            self.shared = n
        elif typ in ASKED_TYPES and isinstance(key, str) and key in self.asked \
                and same(call_fields(event), self.asked[key]):
            for f in CALL_FIELDS:
                out.pop(f, None)
            out[ASKED] = 1
        elif typ == "message" and conv is not None and type(event.get("index")) is int \
                and event.get("id") == f"msg:{conv}:{event['index']}":
            del out["id"]
            out[DERIVED_ID] = 1
        recent = self.recent[conv]
        return {k: v if k in (SHARED, ASKED, KEYED, DERIVED_ID) else self.value(v, recent) for k, v in out.items()}

    def value(self, v, recent):
        if isinstance(v, str):
            return self.text(v, recent) if len(v) >= MIN_REF else v
        if isinstance(v, dict):
            return {escape(k): self.value(x, recent) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.value(x, recent) for x in v]
        return v

    def text(self, s: str, recent):
        d = digest(s)
        if d in self.known:
            return {REF: d}
        parts = self.splice(s, recent, SPLICES)
        return {SPLICE: parts} if len(parts) > 1 else s

    def splice(self, s: str, recent, depth: int) -> list:
        """S as parts: literal texts and pointers to the longest earlier text of its conversation it holds."""
        best = None
        if depth >= 0 and len(s) >= MIN_REF:
            for c, d in recent:
                if len(c) < len(s) and (best is None or len(c) > len(best[0])) and c in s:
                    best = (c, d)
        if best is None:
            return [s] if s else []
        c, d = best
        i = s.index(c)
        return self.splice(s[:i], recent, depth - 1) + [{REF: d}] + self.splice(s[i + len(c):], recent, depth - 1)

    def wrote(self, event: dict) -> None:
        """Note an event that is now written in full (the one `encode` was last given)."""
        conv = conv_of(event)
        recent = self.recent[conv]
        for s in texts(unshared(event, self.shared), []):
            d = digest(s)
            if d not in self.known:
                self.known.add(d)
                recent.append((s, d))
        follow_calls(self, event, conv)


class Decoder:
    """Reads version-2 lines back into the events that were written (`decode`, one line after another)."""

    def __init__(self):
        self.strings: dict[str, str] = {}
        self.last_request: dict = {}
        self.asked: dict = {}

    def decode(self, line: dict) -> dict:
        """The event LINE stands for; raises CodecError naming the field that does not decode."""
        event = {}
        marks = {}
        for k, v in line.items():
            if k in (SHARED, ASKED, KEYED, DERIVED_ID):
                marks[k] = v
                continue
            name = self.key(k, k)
            event[name] = self.value(v, name)
        typ, conv = event.get("type"), conv_of(event)
        if KEYED in marks:
            ident = event.get("id")
            if typ not in KEY_IDS or not isinstance(ident, str) or not ident.startswith(KEY_IDS[typ]):
                raise CodecError(f"field {KEYED!r}: the event's id does not spell its key")
            event["key"] = ident[len(KEY_IDS[typ]):]
        if SHARED in marks:
            n, prev, msgs = marks[SHARED], self.last_request.get(conv), event.get("messages")
            if typ != "request" or type(n) is not int or prev is None or not 0 < n <= len(prev) \
                    or not isinstance(msgs, list):
                raise CodecError(f"field {SHARED!r}: no earlier request of this conversation has {n!r} messages")
            event["messages"] = prev[:n] + msgs
        if ASKED in marks:
            key = event.get("key")
            fields = self.asked.get(key) if isinstance(key, str) else None
            if typ not in ASKED_TYPES or fields is None:
                raise CodecError(f"field {ASKED!r}: no request of key {str(event.get('key'))[:80]!r} is pending")
            event.update(fields)
        if DERIVED_ID in marks:
            if typ != "message" or not isinstance(conv, str) or type(event.get("index")) is not int:
                raise CodecError(f"field {DERIVED_ID!r}: the event has no conversation and index to spell its id")
            event["id"] = f"msg:{conv}:{event['index']}"
        for s in texts(unshared(event, marks.get(SHARED, 0)), []):
            self.strings.setdefault(digest(s), s)
        follow_calls(self, event, conv)
        return event

    @staticmethod
    def key(k, field):
        if isinstance(k, str) and k.startswith("$"):
            if not k.startswith("$$"):
                raise CodecError(f"field {field!r}: the key {k[:40]!r} is not one this encoding writes")
            return k[1:]
        return k

    def value(self, v, field):
        if isinstance(v, dict):
            if len(v) == 1 and REF in v:
                return self.ref(v[REF], field)
            if len(v) == 1 and SPLICE in v:
                parts = v[SPLICE]
                if not isinstance(parts, list):
                    raise CodecError(f"field {field!r}: a splice that is not a list")
                out = []
                for p in parts:
                    if isinstance(p, str):
                        out.append(p)
                    elif isinstance(p, dict) and len(p) == 1 and REF in p:
                        out.append(self.ref(p[REF], field))
                    else:
                        raise CodecError(f"field {field!r}: a splice part that is neither a text nor a pointer")
                return "".join(out)
            return {self.key(k, field): self.value(x, field) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x, field) for x in v]
        return v

    def ref(self, d, field):
        if not isinstance(d, str) or d not in self.strings:
            raise CodecError(f"field {field!r}: a pointer to a text no earlier line holds ({str(d)[:40]!r})")
        return self.strings[d]
