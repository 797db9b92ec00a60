"""The exploration a conversation holds: (input, output) pairs read back from the protocol's messages.

The turn@shot protocol (runner/protocols/turnshot.py `feedback_message`) answers an input it ran with
"Input: X\\nOutput:\\nTEXT" followed by the next turn's prompt, and puts the last output before the first test
question. A rejected input is answered without "Input:" (or, under published grading, leaves the
conversation): it is not an observation. The explorer reads its history from here only.
"""
from __future__ import annotations

from ..answers import extract_answer
from .base import History

# Where an output's text ends: the next turn's prompt, or the test question put after the last output.
# Outputs that report no value of f: a refused input, a failed or stopped run (compiler/blackbox/world.py).
REFUSED = ("rejected: ", "error: ", "limit: ")
ENDS = ("\n\nTurn ", "\n********", "\nTest ", "\n\nExploration is over")


def output_text(message: str) -> str | None:
    """The box's output in a feedback message, or None when the message reports no run."""
    if not message.startswith("Input: ") or "\nOutput:\n" not in message:
        return None
    body = message.split("\nOutput:\n", 1)[1]
    cut = min([body.find(m) for m in ENDS if m in body] or [len(body)])
    return body[:cut].strip()


def exploration(messages) -> History:
    """[(input sent, output text)] in order, from the messages of one conversation; the inputs the box refused
    in `.refused`."""
    out = History()
    for prev, msg in zip(messages, messages[1:]):
        if prev.get("role") != "assistant" or msg.get("role") != "user":
            continue
        text = output_text(str(msg.get("content") or ""))
        if text is None:
            continue
        if text.startswith(REFUSED):
            out.refused.append(extract_answer(prev.get("content")))
        else:
            out.append((extract_answer(prev.get("content")), text))
    return out
