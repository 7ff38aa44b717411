"""The jobs that run on what the collector kept, one room per subcommand: ``candidates/``
(``searchpulse feedback``: failing queries from per-query aggregates → candidates for the next
human judgment set, stratified, pooled, PII-safe), ``judging/`` (``judgments``), ``evaluate/``
(``evaluate``), ``clicks/`` (``clicks``), ``experiments/`` (``experiments``); ``pages/`` is what
their HTML pages share. The judgment files they read and write are in collector/judgments/."""
