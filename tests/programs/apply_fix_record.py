"""Apply a fix record mechanically, from the record alone, then run a job:
``python apply_fix_record.py RECORD.json JOB.py ARGS...``.

Written from docs/report-json.md's action kinds, independently of otel_dynamo's own
start-up hook (``--try-fixes``): what any program reading the record would do. ``env``
actions are set before torch is imported (torch reads its variables at import), then the
config actions, then ``torch.compile`` is wrapped for ``mark_dynamic`` and
``compile_kwargs``; the job runs as ``__main__``.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import runpy
import sys


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        record = json.load(file)
    actions = record["actions"]
    for action in actions:
        if action["kind"] == "env":
            os.environ[action["name"]] = action["value"]
    import torch

    for action in actions:
        if action["kind"] == "config":
            module, _, name = action["name"].rpartition(".")
            setattr(importlib.import_module(module), name, action["value"])
        elif action["kind"] == "config_add":
            module, _, name = action["name"].rpartition(".")
            getattr(importlib.import_module(module), name).add(resolve(action["value"]))
    wrapped = [a for a in actions if a["kind"] in ("mark_dynamic", "compile_kwargs")]
    if wrapped:
        torch.compile = compile_wrapper(torch, torch.compile, wrapped)
    job = sys.argv[2]
    sys.argv = sys.argv[2:]
    runpy.run_path(job, run_name="__main__")


def resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def compile_wrapper(torch, original, actions):
    def compile(model=None, **kwargs):
        if model is None:
            return functools.partial(compile, **kwargs)
        is_module = isinstance(model, torch.nn.Module)
        code = (type(model).forward if is_module else model).__code__
        mine = [
            a
            for a in actions
            if (a["file"], a["line"], a["function"])
            == (code.co_filename, code.co_firstlineno, code.co_name)
        ]
        for action in mine:
            if action["kind"] == "compile_kwargs":
                kwargs.update(action["kwargs"])
        compiled = original(model, **kwargs)
        marks = [a for a in mine if a["kind"] == "mark_dynamic"]
        if not marks:
            return compiled
        shift = 1 if is_module else 0  # a module is called without self

        def mark(args):
            for action in marks:
                torch._dynamo.mark_dynamic(args[action["position"] - shift], action["dims"])

        if is_module:  # outside the compiled region: a hook of the compiled module
            compiled.register_forward_pre_hook(lambda _module, args: mark(args))
            return compiled

        def call(*args, **call_kwargs):
            mark(args)
            return compiled(*args, **call_kwargs)

        return call

    return compile


if __name__ == "__main__":
    main()
