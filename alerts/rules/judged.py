"""Alerts on judged relevance of the live rankings (alerts/tests/judged.test.yml)."""

from __future__ import annotations

from alerts.config import (
    AlertRow,
    Profile,
)
from alerts.rules.recordings import (
    Built,
    Recordings,
    baseline_text,
    builds,
    guarded,
    weeks_ago,
)
from collector import definitions as d

JUDGED_NDCG = d.JUDGED_NDCG_MEAN.ratio
JUDGED_COVERAGE = d.JUDGED_COVERAGE_MEAN.ratio


@builds("SearchJudgedRelevanceDrop")
def _judged_drop(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    r_short, r_long = (rec.ratio("application", JUDGED_NDCG, short),
                       rec.ratio("application", JUDGED_NDCG, long))
    base = rec.baseline(r_long)
    three_digits = 'printf "%.3f"'
    condition = (f"{r_short} < {t.judged_ndcg_drop_factor} * {base}\n"
                 f"and {r_long} < {t.judged_ndcg_drop_factor} * {base}")
    return Built(
        guarded(rec, condition, long, t.min_judged_searches_long_window,
                 baseline_minimum=True, traffic="judged_searches"),
        "The rankings {{ $labels.application }} shows score worse against the judgment set.",
        f"Judged NDCG@10 of {{{{ $labels.application }}}} is {{{{ $value | {three_digits} }}}} "
        f"over {short} and below ×{t.judged_ndcg_drop_factor} of its baseline over {long} too; "
        f"baseline (median of the same {long} window {weeks_ago(profile)}): "
        f"{baseline_text(r_long, three_digits)}. The ranking of judged queries changed "
        f"for the worse: check ranking deploys first.",
        d.JUDGED_NDCG_MEAN.key, needs_tracking=True)


@builds("SearchJudgmentSetStale")
def _judgments_stale(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    floor = t.judged_coverage_min
    return Built(
        guarded(rec, f"{rec.ratio('application', JUDGED_COVERAGE, short)} < {floor}\n"
                      f"and {rec.ratio('application', JUDGED_COVERAGE, long)} < {floor}",
                 long, t.min_judged_searches_long_window, traffic="judged_searches"),
        "The judgment set of {{ $labels.application }} no longer knows what production shows.",
        f"Only {{{{ $value | humanizePercentage }}}} of the top 10 that judged queries of "
        f"{{{{ $labels.application }}}} show has a grade, over {short} and {long} (floor "
        f"{floor:.0%}): judged NDCG is measuring a catalogue that no longer exists. Re-pool: "
        f"`searchpulse feedback` lists judged queries with low coverage.",
        d.JUDGED_COVERAGE_MEAN.key, needs_tracking=False)
