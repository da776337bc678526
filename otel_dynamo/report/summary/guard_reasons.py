"""Recompile reasons in plain words: one reading of Dynamo's failed-guard text.

Dynamo states why it recompiled with the guard that failed, as code or as its check's
message (torch 2.8 to 2.15 word them alike), e.g.::

    tensor 'x' size mismatch at index 0. expected 4, actual 8
    ___stack0 == 64.75                     # return x * scale  # job.py:4 in f
    len(L['xs']) == 3

``plain_reason`` reads the common shapes ("input x: dimension 0 changed from 4 to 8");
anything else is shown as Dynamo wrote it. The terminal, the page and the diff all show
this reading, so one recompile reads the same everywhere; the raw text stays beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_COMPILE_ID_PREFIX = re.compile(r"^\s*-?\s*\d+/\d+:\s*")
"""Several failed cache entries are listed "0/1: <guard>" per entry: the id is dropped."""
_COMMENT = re.compile(r"\s+#\s.*$")
"""Dynamo's guard code ends in "# <user source line>  # <file>:<line> in <function>"."""

_TENSOR = r"tensor '(?P<name>.+?)'"
_EXPECTED_ACTUAL = r"\.? expected (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
_TENSOR_CHECKS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(
            _TENSOR + r" (?P<what>size|stride) mismatch at index (?P<index>\d+)\.?"
            r" expected (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
        ),
        lambda m: (
            f"input {_source(m['name'])}: "
            f"{'dimension' if m['what'] == 'size' else 'stride of dimension'} {m['index']} "
            f"changed from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        re.compile(_TENSOR + r" rank mismatch" + _EXPECTED_ACTUAL),
        lambda m: (
            f"input {_source(m['name'])}: number of dimensions changed "
            f"from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        re.compile(_TENSOR + r" dtype mismatch" + _EXPECTED_ACTUAL),
        lambda m: (
            f"input {_source(m['name'])}: dtype changed from "
            f"{_dtype(m['expected'])} to {_dtype(m['actual'])}"
        ),
    ),
    (
        re.compile(
            _TENSOR + r" requires_grad mismatch\.? expected requires_grad=(?P<expected>\S+?)\.?$"
        ),
        lambda m: f"input {_source(m['name'])}: requires_grad changed (was {_flag(m['expected'])})",
    ),
    (
        re.compile(_TENSOR + r" dispatch key set mismatch"),
        lambda m: f"input {_source(m['name'])}: device, layout or autograd state changed",
    ),
    (
        re.compile(_TENSOR + r" .*device.* mismatch", re.IGNORECASE),
        lambda m: f"input {_source(m['name'])}: device changed",
    ),
)

_LITERAL = (
    r"(?P<value>-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|-?inf|nan|-?\d+"
    r"|True|False|'[^']*'|\"[^\"]*\")"
)
_CONSTANT = re.compile(r"^(?P<source>.+?) == " + _LITERAL + r"$")
_LENGTH = re.compile(r"^len\((?P<source>.+)\) == (?P<value>\d+)$")
_DIMENSION = r"(?P<source>.+?)\.(?P<what>size|stride)\(\)\[(?P<index>\d+)\]"
_SIZE = re.compile(r"^" + _DIMENSION + r" (?P<op>==|!=|<=|>=|<|>) (?P<value>-?\d+)$")
_SIZE_FLIPPED = re.compile(r"^(?P<value>-?\d+) (?P<op><=|>=|<|>) " + _DIMENSION + r"$")
_OBJECT_ID = re.compile(r"^(?:___check_obj_id|check_obj_id)\((?P<source>.+), \d+\)$")
_TYPE_ID = re.compile(r"^(?:___check_type_id|check_type_id)\((?P<source>.+), \d+\)$")
_IS_NONE = re.compile(r"^(?P<source>.+?) is (?P<negated>not )?None$")
_HASATTR = re.compile(r"^(?P<negated>not )?hasattr\((?P<source>.+), '(?P<attr>[^']+)'\)$")
_GLOBAL_STATE = re.compile(r"^(?:GLOBAL_STATE changed:|___check_global_state\(\))\s*(?P<what>.*)$")
_TORCH_FUNCTION = re.compile(r"^___check_torch_function_mode_stack\(\)")
_STACK_SOURCE = re.compile(r"^___stack\d+$")
_FLIPPED_OP = {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}


def plain_reason(raw: str | None) -> str | None:
    """A plain reading of a recompile reason (Dynamo's failed guard); the raw text where
    its shape is not one read here; None for None. Several failed guards ("; " or one per
    line) are read one by one and joined with "; "."""
    if raw is None:
        return None
    parts = [part.strip() for part in re.split(r"\n|;\s+(?=\S)", raw) if part.strip()]
    if not parts:
        return raw
    read = [_plain_one(part) for part in parts]
    return "; ".join(dict.fromkeys(read))


def guard_text(raw: str) -> str:
    """The failed guard as Dynamo wrote it, without its trailing source comment."""
    return "; ".join(
        _COMMENT.sub("", _COMPILE_ID_PREFIX.sub("", line)).strip()
        for line in raw.splitlines()
        if line.strip()
    )


def _plain_one(reason: str) -> str:
    guard = _COMMENT.sub("", _COMPILE_ID_PREFIX.sub("", reason)).strip()
    for pattern, read in _TENSOR_CHECKS:
        match = pattern.match(guard)
        if match is not None:
            return read(match)
    return _plain_guard_code(guard) or guard


def _plain_guard_code(guard: str) -> str | None:
    """The reading of a guard written as Python code; None where none applies."""
    if match := _LENGTH.match(guard):
        return f"the length of {_source(match['source'])} changed (was {match['value']})"
    if match := _SIZE.match(guard) or _SIZE_FLIPPED.match(guard):
        return _size_reading(match, flipped=match.re is _SIZE_FLIPPED)
    if match := _CONSTANT.match(guard):
        kind = _literal_kind(match["value"])
        return f"{_subject(match['source'])}a Python {kind} value changed (was {match['value']})"
    if match := _OBJECT_ID.match(guard):
        return f"{_subject(match['source'])}a different object than before"
    if match := _TYPE_ID.match(guard):
        return f"{_subject(match['source'])}its type changed"
    if match := _IS_NONE.match(guard):
        was = "None" if match["negated"] is None else "not None"
        return f"{_subject(match['source'])}changed from {was}"
    if match := _HASATTR.match(guard):
        had = "did not have" if match["negated"] else "had"
        return f"{_subject(match['source'])}attribute {match['attr']} changed (it {had} it)"
    if match := _GLOBAL_STATE.match(guard):
        what = match["what"].strip()
        return "global torch state changed" + (f": {what}" if what else "")
    if _TORCH_FUNCTION.match(guard):
        return "the torch function mode stack changed"
    return None


def _size_reading(match: re.Match[str], *, flipped: bool) -> str:
    what = "dimension" if match["what"] == "size" else "stride of dimension"
    subject = f"input {_source(match['source'])}: {what} {match['index']}"
    op = _FLIPPED_OP[match["op"]] if flipped else match["op"]
    if op == "==":
        return f"{subject} changed (was {match['value']})"
    return f"{subject} is no longer {op} {match['value']}"


def _subject(source: str) -> str:
    """ "input x: " for a named source; "" for a value on Dynamo's stack (no name)."""
    shown = _source(source)
    return "" if _STACK_SOURCE.match(shown) else f"input {shown}: "


_SOURCE_PART = re.compile(r"^(?:L|G)\[(?P<quote>['\"])(?P<name>.+?)(?P=quote)\]")
_MODULE_ITEM = re.compile(r"\._(?:modules|parameters|buffers)\[(['\"])(?P<name>.+?)\1\]")


def _source(source: str) -> str:
    """Dynamo's source of a value as the user's name for it: L['self']._modules['fc']
    ._parameters['weight'] reads self.fc.weight; G['cfg'] reads cfg."""
    shown = source.strip()
    if shown.startswith("tensor "):
        shown = shown[len("tensor ") :].strip("'")
    shown = _SOURCE_PART.sub(lambda match: match["name"], shown)
    shown = _MODULE_ITEM.sub(lambda match: "." + match["name"], shown)
    return shown


def _literal_kind(value: str) -> str:
    if value in ("True", "False"):
        return "bool"
    if value[:1] in "'\"":
        return "str"
    if re.fullmatch(r"-?\d+", value):
        return "int"
    return "float"


def _dtype(value: str) -> str:
    return value.removeprefix("torch.")


def _flag(value: str) -> str:
    return str(value.strip().lower() in ("1", "true"))
