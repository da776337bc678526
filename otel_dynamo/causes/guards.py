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

import dataclasses
import re
from collections.abc import Callable

from otel_dynamo.causes.remembered import remembered

KIND_SIZE = "size"
KIND_STRIDE = "stride"
KIND_SIZE_OR_STRIDE = "size_or_stride"  # a pattern's kind until its match says which
KIND_RANK = "rank"
KIND_DTYPE = "dtype"
KIND_REQUIRES_GRAD = "requires_grad"
KIND_DEVICE = "device"
KIND_LENGTH = "length"
KIND_INT = "int"
KIND_FLOAT = "float"
KIND_BOOL = "bool"
KIND_STR = "str"
KIND_OBJECT = "object"
KIND_TYPE = "type"
KIND_DICT_KEY = "dict_key"
KIND_NONE = "none"
KIND_ATTRIBUTE_PRESENCE = "attribute_presence"
KIND_GLOBAL_STATE = "global_state"
KIND_BACKEND = "backend"
KIND_OTHER = "other"
"""What a failed guard checked: a tensor's size, stride, rank, dtype, requires_grad or
device; a sequence's length; a Python constant's value (by its type); an object's
identity or type; a dict's keys; None-ness; an attribute's presence; torch's global
state; the backend; anything else."""
_CONSTANT_KINDS = {"int": KIND_INT, "float": KIND_FLOAT, "bool": KIND_BOOL, "str": KIND_STR}

_COMPILE_ID_PREFIX = re.compile(r"^\s*-?\s*\d+/\d+:\s*")
"""Several failed cache entries are listed "0/1: <guard>" per entry: the id is dropped."""
_COMMENT = re.compile(r"\s+#\s.*$")
"""Dynamo's guard code ends in "# <user source line>  # <file>:<line> in <function>"."""
_USER_STACK = re.compile(r"\n\s*User stack trace:.*$", re.DOTALL)
"""torch 2.13 on append the user's stack to the reason; the report has its own columns
for where the function is."""
_GUARD_HINT = re.compile(r"\s*\(HINT: (?P<hint>[^()]*(?:\([^()]*\)[^()]*)*)\)", re.DOTALL)
"""What torch writes after a failed guard on a module's int attribute (after the guard
up to 2.12, after its source comment later)."""
_PARAMETER_HINT = re.compile(
    r"\.?\s*Guard failed on a parameter, consider using\s+"
    r"torch\._dynamo\.config\.force_parameter_static_shapes = False\s+"
    r"to allow dynamism on parameters\.?"
)
"""What Dynamo appends to a failed guard on a module's parameter (a config hint)."""

_TENSOR = r"tensor '(?P<name>.+?)'"
_EXPECTED_ACTUAL = r"\.? expected (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
_TENSOR_CHECKS: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        KIND_SIZE_OR_STRIDE,
        re.compile(
            _TENSOR + r" (?P<what>size|stride) mismatch at index (?P<index>\d+)\.?"
            r" expected (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
        ),
        lambda m: (
            f"{named(m['name'])}: "
            f"{'dimension' if m['what'] == 'size' else 'stride of dimension'} {m['index']} "
            f"changed from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        KIND_RANK,
        re.compile(_TENSOR + r" rank mismatch" + _EXPECTED_ACTUAL),
        lambda m: (
            f"{named(m['name'])}: number of dimensions changed "
            f"from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        KIND_DTYPE,
        re.compile(_TENSOR + r" dtype mismatch" + _EXPECTED_ACTUAL),
        lambda m: (
            f"{named(m['name'])}: dtype changed from "
            f"{_dtype(m['expected'])} to {_dtype(m['actual'])}"
        ),
    ),
    (
        KIND_REQUIRES_GRAD,
        re.compile(
            _TENSOR + r" requires_grad mismatch\.? expected requires_grad=(?P<expected>\S+?)\.?$"
        ),
        lambda m: f"{named(m['name'])}: requires_grad changed (was {_flag(m['expected'])})",
    ),
    (
        KIND_DEVICE,
        re.compile(
            _TENSOR
            + r" dispatch key set mismatch\.? expected DispatchKeySet\((?P<expected>[^)]*)\),"
            r" actual DispatchKeySet\((?P<actual>[^)]*)\)\.?$"
        ),
        lambda m: f"{named(m['name'])}: {_dispatch_change(m['expected'], m['actual'])}",
    ),
    (
        KIND_DEVICE,
        re.compile(_TENSOR + r" dispatch key set mismatch"),
        lambda m: f"{named(m['name'])}: device, layout or autograd state changed",
    ),
    (
        KIND_DEVICE,
        re.compile(
            _TENSOR + r" Tensor device index mismatch\.? Expected device index to be"
            r" (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
        ),
        lambda m: f"{named(m['name'])}: device index changed from {m['expected']} to {m['actual']}",
    ),
    (
        KIND_DEVICE,
        re.compile(_TENSOR + r" .*device.* mismatch", re.IGNORECASE),
        lambda m: f"{named(m['name'])}: device changed",
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
_TYPE_SUFFIX = r"(?:, type=<class '(?P<type>[^']+)'>)?"
"""torch 2.12 on name the type the guard expected."""
_OBJECT_ID = re.compile(
    r"^(?:___check_obj_id|check_obj_id)\((?P<source>.+?), \d+\)" + _TYPE_SUFFIX + r"$"
)
_TYPE_ID = re.compile(
    r"^(?:___check_type_id|check_type_id)\((?P<source>.+?), \d+\)" + _TYPE_SUFFIX + r"$"
)
_BACKEND = re.compile(
    r"^BACKEND_MATCH failure:.*?Cached backend: (?P<old>.+?) \(id=\S+\)\.\s*"
    r"New backend: (?P<new>.+?) \(id=\S+\)",
    re.DOTALL,
)
_BACKEND_CODE = re.compile(r"^(?:___check_current_backend|BACKEND_MATCH)\b")
_COMPILER_NAME = re.compile(r"compiler='(?P<name>[^']+)'")
_DICT_CONTAINS = re.compile(r"^(?P<negated>not )?___dict_contains\((?P<key>.+?), (?P<source>.+)\)$")
_IS_NONE = re.compile(r"^(?P<source>.+?) is (?P<negated>not )?None$")
_HASATTR = re.compile(r"^(?P<negated>not )?hasattr\((?P<source>.+), '(?P<attr>[^']+)'\)$")
_GLOBAL_STATE = re.compile(r"^(?:GLOBAL_STATE changed:|___check_global_state\(\))\s*(?P<what>.*)$")
_TORCH_FUNCTION = re.compile(r"^___check_torch_function_mode_stack\(\)")
_STACK_SOURCE = re.compile(r"^___stack\d+$")
_FLIPPED_OP = {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}


@dataclasses.dataclass(frozen=True)
class GuardFailure:
    """One failed guard, read: what kind of check failed, on which of Dynamo's sources
    (``L['x']``, ``G['SCALE']``, ``L['self'].step``; None where the guard names none, or
    checks a value on Dynamo's stack: then ``stack_slot``), the dimension it is about,
    and its plain reading."""

    kind: str
    source: str | None
    plain: str
    dimension: int | None = None
    torch_hint: str | None = None
    """The hint torch wrote beside the guard ("(HINT: ...)"), where it wrote one."""
    stack_slot: str | None = None
    """Where the value sits on Dynamo's stack (``___stack0``) when it has no source: the
    same slot each time that code recompiles, whatever value it held."""


def plain_reason(raw: str | None) -> str | None:
    """A plain reading of a recompile reason (Dynamo's failed guard); the raw text where
    its shape is not one read here; None for None. Several failed guards ("; " or one per
    line) are read one by one and joined with "; "."""
    return None if raw is None else _reading(raw)


@remembered(max_length=4096, size=4096)
def _reading(raw: str) -> str:
    failures = read_guards(raw)
    if not failures:
        return raw
    return "; ".join(dict.fromkeys(failure.plain for failure in failures))


@remembered(max_length=4096, size=4096)
def read_guards(raw: str) -> tuple[GuardFailure, ...]:
    """Each failed guard of a recompile reason, read (in Dynamo's order)."""
    text = _USER_STACK.sub("", raw)
    parts = [
        part.strip() for part in re.split(r"\n|;\s+(?=\S)", _one_line_hints(text)) if part.strip()
    ]
    return tuple(_read_one(part) for part in parts)


def guard_text(raw: str) -> str:
    """The failed guard as Dynamo wrote it, without its trailing source comment."""
    return "; ".join(
        _COMMENT.sub("", _COMPILE_ID_PREFIX.sub("", line)).strip()
        for line in _one_line_hints(_USER_STACK.sub("", raw)).splitlines()
        if line.strip()
    )


def _one_line_hints(text: str) -> str:
    """The parameter hint (torch writes it over three lines) on its guard's line."""
    return _PARAMETER_HINT.sub(lambda match: " ".join(match[0].split()), text)


def _read_one(reason: str) -> GuardFailure:
    hint = _GUARD_HINT.search(reason)
    if hint is not None:
        reason = reason[: hint.start()] + reason[hint.end() :]
        return dataclasses.replace(_read_one(reason), torch_hint=" ".join(hint["hint"].split()))
    guard = _COMMENT.sub("", _COMPILE_ID_PREFIX.sub("", reason)).strip()
    if match := _BACKEND.match(guard):
        plain = (
            f"compiled with another backend: {_backend(match['new'])}, was {_backend(match['old'])}"
        )
        return GuardFailure(KIND_BACKEND, None, plain)
    checked = _PARAMETER_HINT.sub("", guard)
    for kind, pattern, read in _TENSOR_CHECKS:
        match = pattern.match(checked)
        if match is not None:
            reading = read(match)
            if checked != guard:
                reading = reading.replace("input ", "parameter ", 1)
            index = match.groupdict().get("index")
            read_kind = kind
            if kind == KIND_SIZE_OR_STRIDE:
                read_kind = KIND_SIZE if match["what"] == "size" else KIND_STRIDE
            return GuardFailure(read_kind, _tensor_source(match["name"]), reading, _int(index))
    return _guard_code(guard) or GuardFailure(KIND_OTHER, None, guard)


def _guard_code(guard: str) -> GuardFailure | None:
    """The reading of a guard written as Python code; None where none applies."""
    if match := _LENGTH.match(guard):
        plain = f"the length of {_source(match['source'])} changed (was {match['value']})"
        return GuardFailure(KIND_LENGTH, match["source"], plain)
    if match := _SIZE.match(guard) or _SIZE_FLIPPED.match(guard):
        kind = KIND_SIZE if match["what"] == "size" else KIND_STRIDE
        plain = _size_reading(match, flipped=match.re is _SIZE_FLIPPED)
        return GuardFailure(kind, match["source"], plain, int(match["index"]))
    if match := _CONSTANT.match(guard):
        kind = _literal_kind(match["value"])
        plain = f"{_subject(match['source'])}a Python {kind} value changed (was {match['value']})"
        return _on_value(_CONSTANT_KINDS[kind], match["source"], plain)
    if match := _OBJECT_ID.match(guard):
        was = f" (was a {_class(match['type'])})" if match["type"] else ""
        plain = f"{_subject(match['source'])}a different object than before{was}"
        return _on_value(KIND_OBJECT, match["source"], plain)
    if match := _TYPE_ID.match(guard):
        was = f" (was {_class(match['type'])})" if match["type"] else ""
        plain = f"{_subject(match['source'])}its type changed{was}"
        return _on_value(KIND_TYPE, match["source"], plain)
    if match := _DICT_CONTAINS.match(guard):
        had = "no longer has" if match["negated"] is None else "now has"
        plain = f"{named(match['source'])}: {had} key {match['key']}"
        return GuardFailure(KIND_DICT_KEY, match["source"], plain)
    if _BACKEND_CODE.match(guard):
        return GuardFailure(KIND_BACKEND, None, "compiled with another backend")
    if match := _IS_NONE.match(guard):
        was = "None" if match["negated"] is None else "not None"
        plain = f"{_subject(match['source'])}changed from {was}"
        return _on_value(KIND_NONE, match["source"], plain)
    if match := _HASATTR.match(guard):
        had = "did not have" if match["negated"] else "had"
        plain = f"{_subject(match['source'])}attribute {match['attr']} changed (it {had} it)"
        return _on_value(KIND_ATTRIBUTE_PRESENCE, match["source"], plain)
    if match := _GLOBAL_STATE.match(guard):
        what = ", ".join(_global_state(field) for field in match["what"].split())
        plain = "global torch state changed" + (f": {what}" if what else "")
        return GuardFailure(KIND_GLOBAL_STATE, None, plain)
    if _TORCH_FUNCTION.match(guard):
        return GuardFailure(KIND_GLOBAL_STATE, None, "the torch function mode stack changed")
    return None


def _size_reading(match: re.Match[str], *, flipped: bool) -> str:
    what = "dimension" if match["what"] == "size" else "stride of dimension"
    subject = f"{named(match['source'])}: {what} {match['index']}"
    op = _FLIPPED_OP[match["op"]] if flipped else match["op"]
    if op == "==":
        return f"{subject} changed (was {match['value']})"
    return f"{subject} is no longer {op} {match['value']}"


def _tensor_source(name: str) -> str:
    """Dynamo's source of a tensor check: its message names the source (``L['x']``) or,
    before torch wrote sources there, the bare name (``x``, a local)."""
    return name if "[" in name else f"L['{name}']"


def _on_value(kind: str, source: str, plain: str) -> GuardFailure:
    """A failed guard on the value at ``source``: its source, or for a value on Dynamo's
    stack (it has no name) its slot there."""
    shown = _source(source)
    if _STACK_SOURCE.match(shown):
        return GuardFailure(kind, None, plain, stack_slot=shown)
    return GuardFailure(kind, source.strip(), plain)


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _subject(source: str) -> str:
    """ "input x: " (or "global SCALE: ", "attribute self.step: ", "stack value ___stack0: ")."""
    return f"{named(source)}: "


_GLOBAL_SOURCE = re.compile(r"^G\[")
_SELF_SOURCE = re.compile(r"^(?:L\[(['\"])self\1\]|self\.)")


def named(source: str) -> str:
    """A source called what it is, by the user's name for it: "input x" (an argument of
    the compiled function), "global SCALE" (a module-level name it reads), "parameter
    self.fc.weight", "buffer self.bn.running_mean", or "attribute self.step" (of the
    module it runs on); a value on Dynamo's stack (a function torch resumes after a graph
    break is handed the values it had there, unnamed) by its slot: "stack value
    ___stack0"."""
    raw = source.strip()
    if raw.startswith("tensor "):
        raw = raw[len("tensor ") :].strip("'")
    shown = _source(source)
    if _STACK_SOURCE.match(shown):
        return f"stack value {shown}"
    if _GLOBAL_SOURCE.match(raw):
        return f"global {shown}"
    if _SELF_SOURCE.match(raw) and shown != "self":
        last = _MODULE_ITEM_KIND.findall(raw)
        kind = {"_parameters": "parameter", "_buffers": "buffer"}.get(last[-1] if last else "")
        return f"{kind or 'attribute'} {shown}"
    return f"input {shown}"


_MODULE_ITEM_KIND = re.compile(r"\.(_modules|_parameters|_buffers)\[")


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


_GLOBAL_STATE_WORDS = {
    "grad_mode": "grad mode (torch.no_grad / torch.enable_grad)",
    "torch_function": "torch function handling (torch._C.DisableTorchFunction)",
    "deterministic_algorithms": "deterministic algorithms (torch.use_deterministic_algorithms)",
    "deterministic_algorithms_warn_only": (
        "deterministic algorithms' warn_only (torch.use_deterministic_algorithms)"
    ),
    "allow_tf32": "TF32 matmuls (torch.backends.cuda.matmul.allow_tf32)",
    "allow_fp16_reduce": "reduced-precision fp16 matmul reductions",
    "allow_bf16_reduce": "reduced-precision bf16 matmul reductions",
    "num_threads": "number of threads (torch.set_num_threads)",
    "default_dtype": "default dtype (torch.set_default_dtype)",
    "autocast_cache_enabled": "autocast's weight cache",
}
"""The fields of Dynamo's global-state guard (its C++ reason names them) in words."""
_AUTOCAST_FIELD = re.compile(r"^autocast\((?P<device>[^)]+)\)_(?P<what>\w+)$")


def _global_state(field: str) -> str:
    if match := _AUTOCAST_FIELD.match(field):
        what = "on or off" if match["what"] == "enabled" else match["what"].replace("_", " ")
        return f"autocast on {match['device']} ({what})"
    return _GLOBAL_STATE_WORDS.get(field, field)


def _dispatch_change(expected: str, actual: str) -> str:
    """What differs between two dispatch key sets: the device (the first key, the
    backend), else the autograd state, else something else of the tensor's kind."""
    before = [key.strip() for key in expected.split(",") if key.strip()]
    after = [key.strip() for key in actual.split(",") if key.strip()]
    if before[:1] != after[:1] and before and after:
        return f"device changed from {before[0]} to {after[0]}"
    if {k for k in before if k.startswith("Autograd")} != {
        k for k in after if k.startswith("Autograd")
    }:
        return "autograd state changed (requires_grad or inference mode)"
    return "device, layout or autograd state changed"


def _backend(shown: str) -> str:
    """A backend as Dynamo shows it, by its name where torch.compile's wrapper names one."""
    match = _COMPILER_NAME.search(shown)
    return match["name"] if match else shown


def _class(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


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
