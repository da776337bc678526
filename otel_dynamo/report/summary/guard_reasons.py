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

from otel_dynamo.report.summary.remembered import remembered

_COMPILE_ID_PREFIX = re.compile(r"^\s*-?\s*\d+/\d+:\s*")
"""Several failed cache entries are listed "0/1: <guard>" per entry: the id is dropped."""
_COMMENT = re.compile(r"\s+#\s.*$")
"""Dynamo's guard code ends in "# <user source line>  # <file>:<line> in <function>"."""
_USER_STACK = re.compile(r"\n\s*User stack trace:.*$", re.DOTALL)
"""torch 2.13 on append the user's stack to the reason; the report has its own columns
for where the function is."""
_PARAMETER_HINT = re.compile(
    r"\.?\s*Guard failed on a parameter, consider using\s+"
    r"torch\._dynamo\.config\.force_parameter_static_shapes = False\s+"
    r"to allow dynamism on parameters\.?"
)
"""What Dynamo appends to a failed guard on a module's parameter (a config hint)."""

_TENSOR = r"tensor '(?P<name>.+?)'"
_EXPECTED_ACTUAL = r"\.? expected (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
_TENSOR_CHECKS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(
            _TENSOR + r" (?P<what>size|stride) mismatch at index (?P<index>\d+)\.?"
            r" expected (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
        ),
        lambda m: (
            f"{_named(m['name'])}: "
            f"{'dimension' if m['what'] == 'size' else 'stride of dimension'} {m['index']} "
            f"changed from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        re.compile(_TENSOR + r" rank mismatch" + _EXPECTED_ACTUAL),
        lambda m: (
            f"{_named(m['name'])}: number of dimensions changed "
            f"from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        re.compile(_TENSOR + r" dtype mismatch" + _EXPECTED_ACTUAL),
        lambda m: (
            f"{_named(m['name'])}: dtype changed from "
            f"{_dtype(m['expected'])} to {_dtype(m['actual'])}"
        ),
    ),
    (
        re.compile(
            _TENSOR + r" requires_grad mismatch\.? expected requires_grad=(?P<expected>\S+?)\.?$"
        ),
        lambda m: f"{_named(m['name'])}: requires_grad changed (was {_flag(m['expected'])})",
    ),
    (
        re.compile(
            _TENSOR
            + r" dispatch key set mismatch\.? expected DispatchKeySet\((?P<expected>[^)]*)\),"
            r" actual DispatchKeySet\((?P<actual>[^)]*)\)\.?$"
        ),
        lambda m: f"{_named(m['name'])}: {_dispatch_change(m['expected'], m['actual'])}",
    ),
    (
        re.compile(_TENSOR + r" dispatch key set mismatch"),
        lambda m: f"{_named(m['name'])}: device, layout or autograd state changed",
    ),
    (
        re.compile(
            _TENSOR + r" Tensor device index mismatch\.? Expected device index to be"
            r" (?P<expected>\S+?), actual (?P<actual>\S+?)\.?$"
        ),
        lambda m: (
            f"{_named(m['name'])}: device index changed from {m['expected']} to {m['actual']}"
        ),
    ),
    (
        re.compile(_TENSOR + r" .*device.* mismatch", re.IGNORECASE),
        lambda m: f"{_named(m['name'])}: device changed",
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


def plain_reason(raw: str | None) -> str | None:
    """A plain reading of a recompile reason (Dynamo's failed guard); the raw text where
    its shape is not one read here; None for None. Several failed guards ("; " or one per
    line) are read one by one and joined with "; "."""
    return None if raw is None else _reading(raw)


@remembered(max_length=4096, size=4096)
def _reading(raw: str) -> str:
    text = _USER_STACK.sub("", raw)
    parts = [
        part.strip() for part in re.split(r"\n|;\s+(?=\S)", _one_line_hints(text)) if part.strip()
    ]
    if not parts:
        return raw
    read = [_plain_one(part) for part in parts]
    return "; ".join(dict.fromkeys(read))


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


def _plain_one(reason: str) -> str:
    guard = _COMMENT.sub("", _COMPILE_ID_PREFIX.sub("", reason)).strip()
    if match := _BACKEND.match(guard):
        return (
            f"compiled with another backend: {_backend(match['new'])}, was {_backend(match['old'])}"
        )
    checked = _PARAMETER_HINT.sub("", guard)
    for pattern, read in _TENSOR_CHECKS:
        match = pattern.match(checked)
        if match is not None:
            reading = read(match)
            return reading.replace("input ", "parameter ", 1) if checked != guard else reading
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
        was = f" (was a {_class(match['type'])})" if match["type"] else ""
        return f"{_subject(match['source'])}a different object than before{was}"
    if match := _TYPE_ID.match(guard):
        was = f" (was {_class(match['type'])})" if match["type"] else ""
        return f"{_subject(match['source'])}its type changed{was}"
    if match := _DICT_CONTAINS.match(guard):
        had = "no longer has" if match["negated"] is None else "now has"
        return f"{_named(match['source'])}: {had} key {match['key']}"
    if _BACKEND_CODE.match(guard):
        return "compiled with another backend"
    if match := _IS_NONE.match(guard):
        was = "None" if match["negated"] is None else "not None"
        return f"{_subject(match['source'])}changed from {was}"
    if match := _HASATTR.match(guard):
        had = "did not have" if match["negated"] else "had"
        return f"{_subject(match['source'])}attribute {match['attr']} changed (it {had} it)"
    if match := _GLOBAL_STATE.match(guard):
        what = ", ".join(_global_state(field) for field in match["what"].split())
        return "global torch state changed" + (f": {what}" if what else "")
    if _TORCH_FUNCTION.match(guard):
        return "the torch function mode stack changed"
    return None


def _size_reading(match: re.Match[str], *, flipped: bool) -> str:
    what = "dimension" if match["what"] == "size" else "stride of dimension"
    subject = f"{_named(match['source'])}: {what} {match['index']}"
    op = _FLIPPED_OP[match["op"]] if flipped else match["op"]
    if op == "==":
        return f"{subject} changed (was {match['value']})"
    return f"{subject} is no longer {op} {match['value']}"


def _subject(source: str) -> str:
    """ "input x: " (or "global SCALE: ", "attribute self.step: ") for a named source; ""
    for a value on Dynamo's stack (no name)."""
    shown = _source(source)
    return "" if _STACK_SOURCE.match(shown) else f"{_named(source)}: "


_GLOBAL_SOURCE = re.compile(r"^G\[")
_SELF_SOURCE = re.compile(r"^L\[(['\"])self\1\]")


def _named(source: str) -> str:
    """A source called what it is, by the user's name for it: "input x" (an argument of
    the compiled function), "global SCALE" (a module-level name it reads), "parameter
    self.fc.weight", "buffer self.bn.running_mean", or "attribute self.step" (of the
    module it runs on)."""
    raw = source.strip()
    if raw.startswith("tensor "):
        raw = raw[len("tensor ") :].strip("'")
    shown = _source(source)
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
