"""``python -m otel_dynamo.cli``: the ``otel-dynamo`` command line."""

import sys

from otel_dynamo.cli import main

sys.exit(main())
