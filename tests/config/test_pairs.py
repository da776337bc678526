"""The one ``key=value,...`` parser (headers, resource attributes): pairs, malformed
items, and the echo that hides values."""

from __future__ import annotations

from otel_dynamo._config.pairs import header_key, parse_pairs, redacted_pairs


def test_pairs_are_stripped_and_values_url_decoded():
    """Keys and values are stripped, values URL-decoded, a value may hold ``=``."""
    assert parse_pairs(" team = ml%20infra , token=a=b ,deployment=") == (
        (("team", "ml infra"), ("token", "a=b"), ("deployment", "")),
        (),
    )


def test_malformed_items_are_kept_apart_and_blank_ones_ignored():
    """An item with no ``=`` or no key is malformed (named as given); blank items are
    nothing."""
    assert parse_pairs("a=1,junk,, ,=orphan,b=2") == (
        (("a", "1"), ("b", "2")),
        ("junk", "=orphan"),
    )


def test_header_keys_are_decoded_and_lowercased():
    """Headers: keys URL-decoded and lowercased, as the SDK's exporters send them."""
    items, _ = parse_pairs("Authorization=Bearer%20abc,X%2DTenant=ml", key=header_key)
    assert items == (("authorization", "Bearer abc"), ("x-tenant", "ml"))


def test_the_redacted_echo_shows_keys_only():
    """What a message may show: each key with ``***``, ``<malformed>`` for the rest."""
    assert redacted_pairs("api-key=secret123,broken,x=1") == "api-key=***,<malformed>,x=***"
