"""A module whose import takes FAKE_IMPORT_SECONDS; it creates FAKE_IMPORT_STARTED first,
so another process or thread can act while the import is in progress."""

from __future__ import annotations

import os
import time
from pathlib import Path

Path(os.environ["FAKE_IMPORT_STARTED"]).touch()
time.sleep(float(os.environ["FAKE_IMPORT_SECONDS"]))
