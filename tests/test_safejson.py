"""worldspec.safejson: deep JSON is a ValueError, never RecursionError; ordinary JSON parses as json does."""
import json

import pytest

from worldspec import safejson


def test_deep_nesting_is_a_value_error():
    with pytest.raises(ValueError, match="nested more than"):
        safejson.loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RecursionError):  # what the plain reader does with the same text
        json.loads("[" * 100_000 + "]" * 100_000)


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"a": "[" * 10_000, "b": ['{"', "\\\"["]})
    assert safejson.loads(text) == json.loads(text)


def test_ordinary_json_and_bytes():
    assert safejson.loads(b'{"x": [1, 2, {"y": null}]}') == {"x": [1, 2, {"y": None}]}
    assert safejson.depth('{"x": [1, [2]]}') == 3
    with pytest.raises(ValueError):
        safejson.loads("{not json")
