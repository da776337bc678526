"""The process's lifecycle as telemetry lives it: background threads, the steps run
before the flush at exit and on SIGTERM/SIGHUP, and what a forked child starts anew.

Knows OpenTelemetry's API, not torch and not the providers: those register here."""
