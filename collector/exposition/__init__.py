"""Exposition: the counts out, as /metrics over HTTP (an exporter's auth and TLS) and as the
replay summary.
"""
