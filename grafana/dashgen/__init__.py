"""Generator of otel_dynamo's Grafana dashboards (grafana-foundation-sdk, Grafana 11).

Run ``python grafana/generate.py`` to rewrite ``grafana/dashboards/*.json`` and
``python grafana/generate.py --check`` to verify the committed files are current.
"""
