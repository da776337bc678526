"""The functions Dynamo makes to resume a function after a graph break.

Past a graph break Dynamo runs the rest of a function as a function of its own,
``torch_dynamo_resume_in_forward_at_55`` (the rest of ``forward`` after line 55; one made
after a break in it names it in turn), which it compiles and guards like any other. A
cause found in one belongs to the function it resumes: a fix that moves a cause there
has not removed it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

RESUME_PREFIX = "torch_dynamo_resume_in_"
_RESUMED = re.compile(rf"^{RESUME_PREFIX}(?P<name>.+)_at_(?P<line>\d+)$")


class Resumed(NamedTuple):
    """What a resume function resumes: the function's code name and the line of the
    break it resumes after."""

    function: str
    line: int


def resumed(function: str | None) -> Resumed | None:
    """The function (outermost: a resume of a resume names the first) and the break's
    line a resume function resumes; None for any other function. A qualified name
    (``Block.torch_dynamo_resume_in_forward_at_55``) is read by its last part."""
    if function is None:
        return None
    match = _RESUMED.match(function.rsplit(".", 1)[-1])
    if match is None:
        return None
    inner = resumed(match["name"])
    return inner or Resumed(match["name"], int(match["line"]))


def same_code(function: str | None, of: str | None) -> bool:
    """Whether a compiled frame named ``function`` runs code of the function ``of``: it
    is ``of`` itself or a function Dynamo made to resume it. Names are compared by their
    last part (the report qualifies a method with its class)."""
    if function is None or of is None:
        return function == of
    own = of.rsplit(".", 1)[-1]
    if function.rsplit(".", 1)[-1] == own:
        return True
    found = resumed(function)
    return found is not None and found.function == own
