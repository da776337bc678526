# shellcheck shell=bash
# Sourced by .ci/torch_matrix.sh and .ci/otel_oldest.sh: what pip prints when it cannot
# reach its index. A version that cannot be downloaded for that reason is reported
# SKIPPED, with the reason, never passed; any other failure fails.
NETWORK_ERRORS='ConnectionError|Max retries exceeded|Temporary failure in name resolution|Network is unreachable|Connection refused|ReadTimeoutError|timed out|No route to host'
