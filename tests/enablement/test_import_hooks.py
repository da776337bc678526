"""Post-import hooks: a callback runs once, right after its module is imported."""

from __future__ import annotations

import sys

from otel_dynamo._enablement import import_hooks


def _module_file(tmp_path, name):
    (tmp_path / f"{name}.py").write_text("VALUE = 7\n")
    return name


def test_callback_runs_right_after_the_module_is_imported(tmp_path, monkeypatch):
    """A callback registered before the import gets the module once it has executed."""
    name = _module_file(tmp_path, "hooked_after_import")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    import_hooks.when_imported(name, lambda module: seen.append(module.VALUE))
    try:
        __import__(name)
    finally:
        sys.modules.pop(name, None)
    assert seen == [7]


def test_the_same_callback_asked_twice_runs_once(tmp_path, monkeypatch):
    """A .pth processed twice (some virtual environments do) registers its hook twice:
    it still runs once, and one cancel takes it back."""
    name = _module_file(tmp_path, "hooked_twice")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[int] = []

    def callback(module):
        seen.append(module.VALUE)

    import_hooks.when_imported(name, callback)
    import_hooks.when_imported(name, callback)
    try:
        __import__(name)
    finally:
        sys.modules.pop(name, None)
    assert seen == [7]
    never_imported = name + "_cancelled"
    try:
        import_hooks.when_imported(never_imported, callback)
        import_hooks.when_imported(never_imported, callback)
        import_hooks.cancel(never_imported, callback)
        assert never_imported not in import_hooks._pending
    finally:
        import_hooks._pending.pop(never_imported, None)  # process-wide: leave none behind


def test_a_module_already_imported_calls_back_at_once():
    """No waiting for a module that is loaded already."""
    seen = []
    import_hooks.when_imported("json", lambda module: seen.append(module.__name__))
    assert seen == ["json"]


def _our_finders() -> list[object]:
    return [f for f in sys.meta_path if isinstance(f, import_hooks._PostImportFinder)]


def test_no_finder_of_ours_is_left_once_every_watched_module_has_loaded(tmp_path, monkeypatch):
    """The finder watches only while a callback waits: after the last watched module has
    loaded (or its callback was cancelled), ``sys.meta_path`` holds no finder of ours, so
    no later import runs a frame of ours (one Dynamo would be shown inside a compiled
    function)."""
    monkeypatch.setattr(import_hooks, "_pending", {})
    loaded, cancelled = _module_file(tmp_path, "watched_then_gone"), "never_imported_here"
    monkeypatch.syspath_prepend(str(tmp_path))

    def callback(module):
        pass

    import_hooks.when_imported(loaded, callback)
    import_hooks.when_imported(cancelled, callback)
    assert len(_our_finders()) == 1
    try:
        __import__(loaded)
    finally:
        sys.modules.pop(loaded, None)
    assert len(_our_finders()) == 1  # one callback still waits
    import_hooks.cancel(cancelled, callback)
    assert _our_finders() == []
