"""``python -m otel_dynamo``: the ``otel-dynamo`` command line."""

import sys

from otel_dynamo.cli import main

sys.exit(main())
