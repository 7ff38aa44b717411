"""Grafana dashboards as code (grafana-foundation-sdk, pinned to Grafana 11.6 / schema 41)."""
