"""Telemetry files are created safely: new, owner-only, never through a link or into a
FIFO, off the compile thread; a torn line never swallows the next record."""

from __future__ import annotations

import errno
import os
import stat
import threading

import pytest

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers import files
from otel_dynamo._providers.setup import setup_providers


def test_created_file_and_directory_are_owner_only(tmp_path):
    """The directory we create is 0700, each file 0600 (whatever the umask allows more)."""
    directory = tmp_path / "telemetry"
    assert files.prepare_directory(directory) is None
    stream = files.ProcessFiles(directory).open("traces")
    stream.write("{}\n")
    stream.close()
    (created,) = directory.iterdir()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(created.stat().st_mode) == 0o600


def test_fifo_at_the_path_is_refused_at_once(tmp_path):
    """A FIFO with no reader: OSError now, never a process blocked in open()."""
    path = tmp_path / "traces.jsonl"
    os.mkfifo(path)
    with pytest.raises(OSError) as raised:
        files.create_private_file(path)
    assert raised.value.errno == errno.EEXIST


def test_symlink_at_the_path_is_refused_and_its_target_untouched(tmp_path):
    """A link planted at the name (even to a file of ours) is never followed."""
    target = tmp_path / "victim"
    target.write_text("precious\n")
    link = tmp_path / "traces.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError):
        files.create_private_file(link)
    assert target.read_text() == "precious\n"


def test_names_carry_a_random_token(tmp_path):
    """Two processes' worth of ProcessFiles never predict each other's names."""
    first = files.ProcessFiles(tmp_path).path("traces").name
    second = files.ProcessFiles(tmp_path).path("traces").name
    assert first != second
    assert first.startswith(f"traces-{files.safe_host_name()}-{os.getpid()}-")


def test_torn_line_is_ended_before_the_next_record(tmp_path, monkeypatch):
    """Disk full part-way through a line: the next write starts on a new line."""
    stream = files.LineFile(tmp_path / "t.jsonl")
    real_write, calls = os.write, []

    def write_half_then_fail(descriptor, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(descriptor, bytes(data[:5]))
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "write", write_half_then_fail)
    with pytest.raises(OSError):
        stream.write('{"first": 1}\n')
    stream.write('{"second": 2}\n')
    stream.close()
    assert (tmp_path / "t.jsonl").read_text() == '{"fir\n{"second": 2}\n'


def test_first_write_that_puts_nothing_down_leaves_no_file(tmp_path, monkeypatch):
    """Disk full at the first write: the file just created is removed and the error
    raised; a later write that fits creates it again with only that line."""
    stream = files.LineFile(tmp_path / "t.jsonl")
    real_write, calls = os.write, []

    def fail_first(descriptor, data):
        calls.append(len(data))
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "write", fail_first)
    with pytest.raises(OSError) as raised:
        stream.write('{"first": 1}\n')
    assert raised.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []
    stream.write('{"second": 2}\n')
    stream.close()
    assert (tmp_path / "t.jsonl").read_text() == '{"second": 2}\n'


def test_empty_text_creates_no_file(tmp_path):
    """Nothing to write: no file."""
    stream = files.LineFile(tmp_path / "t.jsonl")
    assert stream.write("") == 0
    stream.close()
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_took_the_name_meanwhile_is_not_removed(tmp_path, monkeypatch):
    """Our empty file renamed away and another planted at its name before the failed
    write: the planted file stays as it was; ours (renamed) is left alone too."""
    path = tmp_path / "t.jsonl"
    stream = files.LineFile(path)

    def swap_then_fail(descriptor, data):
        path.rename(tmp_path / "moved")
        path.write_text("planted\n")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", swap_then_fail)
    with pytest.raises(OSError):
        stream.write("{}\n")
    monkeypatch.undo()
    assert path.read_text() == "planted\n"
    assert (tmp_path / "moved").read_text() == ""


def test_files_are_opened_off_the_main_thread(tmp_path, monkeypatch):
    """Spans and metrics recorded on the main thread (where compiles run, and where the
    providers are built): each file is created by an export thread."""
    opened_on = []
    real_create = files.create_private_file

    def recording_create(path):
        opened_on.append(threading.current_thread() is threading.main_thread())
        return real_create(path)

    monkeypatch.setattr(files, "create_private_file", recording_create)
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    with telemetry.tracer_provider.get_tracer("test").start_as_current_span("compile"):
        pass
    telemetry.meter_provider.get_meter("test").create_counter("n").add(1)
    assert telemetry.shutdown(5.0) is True
    assert opened_on and not any(opened_on)
