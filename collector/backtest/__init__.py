"""``searchpulse backtest``: the generated rules run over a log's history on a real Prometheus
(docs/backtest.md). One module per job: the tools it needs (tools), the TSDB and the server on
it (tsdb), recording rules layered by what they read (layers), alert states as Prometheus keeps
them (alerting), episodes and incidents (episodes), the report (report), the run (run)."""
