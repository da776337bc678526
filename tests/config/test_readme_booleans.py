"""docs/configuration.md's sentence on booleans states exactly the words parse_bool accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from otel_dynamo._config.settings import parse_bool

README = Path(__file__).parents[2] / "docs" / "configuration.md"


def _stated_pairs() -> list[tuple[str, str]]:
    text = README.read_text()
    start = text.index("Booleans (`true`/`false` below)")
    sentence = text[start : text.index(".", start)]
    return re.findall(r"`(\w+)`/`(\w+)`", sentence)


def test_every_stated_word_is_accepted_with_its_meaning():
    """Each `yes`/`no` pair of the sentence parses to True/False, in any case."""
    pairs = _stated_pairs()
    assert len(pairs) == 4
    for true_word, false_word in pairs:
        assert parse_bool(true_word.upper()) is True
        assert parse_bool(false_word.title()) is False
    assert parse_bool("") is False


@pytest.mark.parametrize("word", ["y", "n", "enabled", "2"])
def test_a_word_the_sentence_does_not_state_is_refused(word):
    """Anything else is not a boolean (a configuration problem, never a guess)."""
    with pytest.raises(ValueError):
        parse_bool(word)
