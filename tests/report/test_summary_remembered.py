"""Results of pure string functions kept across ranks (otel_dynamo.causes.remembered)."""

from __future__ import annotations

from otel_dynamo.causes.guards import plain_reason
from otel_dynamo.causes.remembered import remembered
from otel_dynamo.report.summary.compiles import compile_id_sort_key


def test_a_short_string_is_worked_out_once_a_long_one_each_time() -> None:
    """A string up to max_length is worked out once however often asked; a longer one
    every time (nothing kept for it); both give the function's result."""
    calls: list[str] = []

    @remembered(max_length=4, size=8)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    results = [upper("ab"), upper("ab"), upper("abcdef"), upper("abcdef")]
    assert (results, calls) == (["AB", "AB", "ABCDEF", "ABCDEF"], ["ab", "abcdef", "abcdef"])


def test_long_ids_and_reasons_read_as_short_ones_do() -> None:
    """A compile id or a recompile reason past the kept length reads as it would if
    kept: a long id sorts last, a reason padded past 4,096 characters reads the same."""
    reason = "tensor 'L[\"x\"]' size mismatch at index 0. expected 4, actual 8"
    padded = reason + " " * 5000
    assert (
        compile_id_sort_key("1" * 70 + "/2"),
        compile_id_sort_key("3/1"),
        plain_reason(reason),
        plain_reason(padded),
    ) == (
        (1 << 60, 2),
        (3, 1),
        "input x: dimension 0 changed from 4 to 8",
        "input x: dimension 0 changed from 4 to 8",
    )


def test_a_tuple_of_strings_is_kept_by_its_characters_together() -> None:
    """A tuple of strings up to max_length characters together is worked out once; one
    longer together (each string short) every time."""
    calls: list[tuple[str, ...]] = []

    @remembered(max_length=4, size=8)
    def joined(names: tuple[str, ...]) -> str:
        calls.append(names)
        return "+".join(names)

    short, long = ("ab", "c"), ("ab", "cd", "e")
    results = [joined(short), joined(short), joined(long), joined(long)]
    assert (results, calls) == (["ab+c", "ab+c", "ab+cd+e", "ab+cd+e"], [short, long, long])
