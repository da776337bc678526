#!/usr/bin/env bash
# Sourced by .ci/test.sh and .ci/torch_matrix.sh: how many pytest-xdist workers a suite
# runs on (one per core, at most MAX_TEST_WORKERS; a module's tests stay on one worker,
# --dist loadscope, so module fixtures such as a real model's compile are set up once).
MAX_TEST_WORKERS=4

test_workers() {  # prints the worker count
  local cores
  cores="$(nproc 2>/dev/null || echo 1)"
  echo $((cores < MAX_TEST_WORKERS ? cores : MAX_TEST_WORKERS))
}
