"""What ``OTEL_DYNAMO_CAPTURE`` leaves in Dynamo's texts (recompile reasons, guards and
graph-break reasons): the source lines Dynamo quotes, and the literal values it compares.

Dynamo writes a failed value guard as ``L['token'] == 'hunter2'  # if token == "hunter2":
# train.py:12 in step``: after ``  # `` come the user's source line and its place; the
string and number literals are the user's values. Names (``L['token']``,
``L['self']._modules['fc'].weight``, ``kwargs['input_ids']``) are kept: they say what
changed, not to what.
"""

from __future__ import annotations

import re

HIDDEN_VALUE = "<value>"
_SOURCE_COMMENT = re.compile(r"\s+# .*$", re.MULTILINE)
_NAME = re.compile(
    r"""(?<![\w.])[A-Za-z_]\w*(?:\[(?:'[^'\n]*'|"[^"\n]*"|-?\d+)\]|\.[A-Za-z_]\w*)*"""
)
"""A source: an identifier with subscripts and attributes, not glued to a number ("1.5e-3")."""
_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""")
_NUMBER = re.compile(r"(?<![\w.\x00])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w\x00])")
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
_GRAPH_SOURCE_LINE = re.compile(r"^[ \t]*# File: .*\n?", re.MULTILINE)
"""The user's source line an FX graph quotes above the nodes it made
(``# File: train.py:12 in forward, code: h = self.fc(x)``)."""


def without_source(text: str) -> str:
    """The text without the source lines Dynamo appends after ``  # ``."""
    return _SOURCE_COMMENT.sub("", text)


def without_values(text: str) -> str:
    """The text with each string and number literal replaced by ``<value>``; names and
    their subscripts kept."""
    names: list[str] = []

    def keep_name(match: re.Match[str]) -> str:
        names.append(match.group(0))
        return f"\x00{len(names) - 1}\x00"

    def hide_string(match: re.Match[str]) -> str:
        # A quoted source (Dynamo's "tensor 'L['x']' ...") is a name: Dynamo's sources all
        # subscript L, G or kwargs. A quoted word or dotted text ('db.prod.internal') is a value.
        name = _PLACEHOLDER.fullmatch(match.group(0)[1:-1])
        is_source = name is not None and "[" in names[int(name.group(1))]
        return match.group(0) if is_source else HIDDEN_VALUE

    protected = _NAME.sub(keep_name, text)
    scrubbed = _NUMBER.sub(HIDDEN_VALUE, _STRING.sub(hide_string, protected))
    return _PLACEHOLDER.sub(lambda match: names[int(match.group(1))], scrubbed)


def captured(text: str, *, source: bool, values: bool) -> str:
    """``text`` with what the capture setting leaves out taken away."""
    if not source:
        text = without_source(text)
    if not values:
        text = without_values(text)
    return text


def graph_without_source(text: str) -> str:
    """A graph's or output code's text without the user source lines FX quotes."""
    return _GRAPH_SOURCE_LINE.sub("", text)
