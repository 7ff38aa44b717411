"""`evaluate`'s measures, named as ir_measures and trec_eval users write them (``nDCG@10``,
``R@100``, ``P(rel=2)@5``, ``ERR@10``): parsed by ir_measures itself, each with its own cut-off,
and computed by ir_measures' providers (pytrec_eval: trec_eval's own C code) — except ERR, which
is ours (``err_at``, the formula collector/series/judged_relevance.py scores live rankings
by). ir_measures' only ERR is gdeval's Perl script: the same formula, R = (2^g − 1)/2^4 with
its maximum grade fixed at 4 (``$MAX_JUDGMENT``), numeric topic ids only and five decimals
printed; ours takes the judgment scale's maximum (``judgments.max_grade``), so at 4 it is
gdeval's ERR to its five decimals (tests/feedback/evaluate/test_means.py).

The default set is the one `evaluate` always reported, at ``k`` = ``evaluate.depth``: NDCG with
the exponential gain 2^g − 1 (``nDCG(gains={2:3,3:7})@10`` as ir_measures writes it: levels not
named keep their grade as gain), ERR@k, AP, P@k, R@k, RR and Judged@k. ``nDCG@10`` alone is
trec_eval's NDCG, whose gain is the grade itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import ir_measures
from ir_measures import AP, RR, Judged, Measure, P, R, nDCG

from collector.errors import MeasureError

ERR_NAME = "ERR"


@dataclass(frozen=True)
class Ranked:
    """One ranking to score: its documents in rank order and its query's grades."""

    documents: list[str]
    grades: dict[str, int]


def defaults(k: int, max_grade: int) -> list[Measure]:
    gains = {g: 2 ** g - 1 for g in range(max_grade + 1)}
    return [nDCG(gains=gains) @ k, ir_measures.ERR @ k, AP(rel=1), P(rel=1) @ k,
            R(rel=1) @ k, RR(rel=1), Judged @ k]


def notes(measures: Iterable[Measure], max_grade: int) -> dict[str, str]:
    """What a measure's name leaves unsaid, stated beside it on every output: an nDCG's gain
    (two nDCGs at one cut-off can differ only by it) and ERR's maximum grade, the judgment
    scale's (``judgments.max_grade``; gdeval, ir_measures' ERR, fixes it at 4)."""
    out: dict[str, str] = {}
    for measure in measures:
        if measure.NAME == ERR_NAME:
            out[str(measure)] = f"max grade {max_grade}"
        elif measure.NAME == "nDCG":
            gains = measure.params.get("gains")
            out[str(measure)] = ("gain = grade" if gains is None else "gain 2^g − 1"
                                 if all(v == 2 ** g - 1 for g, v in gains.items())
                                 else "gains as named")
    return out


def label(name: str, measure_notes: dict[str, str]) -> str:
    """``ERR@10 (max grade 3)``: a measure's name with its note, as tables head it."""
    note = measure_notes.get(name)
    return f"{name} ({note})" if note else name


def parse(names: Iterable[str], where: str) -> list[Measure]:
    """Each name as ir_measures parses it, checked computable; ``where`` names the flag or the
    setting in errors. Repeats are dropped (a measure is one column)."""
    measures: list[Measure] = []
    for name in names:
        try:
            measure = ir_measures.parse_measure(name.strip())
            measure.validate_params()
        except (ValueError, NameError, SyntaxError, AssertionError) as error:
            raise MeasureError(f"{where} {name!r}: not a measure ir_measures can parse "
                               f"({error}); e.g. nDCG@10, R@100, P(rel=2)@5, ERR@10") from None
        if measure.NAME != ERR_NAME and provider_of(measure) is None:
            raise MeasureError(f"{where} {name!r}: no ir_measures provider available here "
                               "computes it")
        if measure not in measures:
            measures.append(measure)
    return measures


def provider_of(measure: Measure) -> ir_measures.providers.Provider | None:
    """The provider ir_measures' default pipeline would use (its order, first available)."""
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.supports(measure) and provider.is_available():
            return provider
    return None


def cutoff(measure: Measure) -> int | None:
    return measure.params.get("cutoff")


def score(measures: Sequence[Measure], rankings: Sequence[Ranked],
          max_grade: int) -> dict[Measure, list[float]]:
    """Every measure's value per ranking (in ``rankings``' order).

    ir_measures takes its dict-of-dict form (what pytrec_eval takes as it is); each ranking is
    handed over with score = N − rank, so trec_eval (which orders by score) keeps our order.
    Measures are grouped by the provider ir_measures would choose and each group is asked
    directly: its fallback wrapper would add a second set of expected (measure, query) pairs,
    hashed by building each measure's repr (a fifth of the gate's time on 100k queries).

    An nDCG with its own gains is asked alone: ir_measures 0.4.3's pytrec_eval provider puts
    an nDCG without gains into whichever trec_eval invocation it built first — with the gains
    of another nDCG if that came first — so ``nDCG(gains=…)@10`` and ``nDCG@10`` asked
    together can swap values (its fallback pipeline orders them by hash: by chance)."""
    qrels = {str(i): ranked.grades for i, ranked in enumerate(rankings)}
    run = {str(i): {d: float(len(ranked.documents) - r) for r, d in enumerate(ranked.documents)}
           for i, ranked in enumerate(rankings)}
    values: dict[Measure, list[float]] = {}
    for measure in measures:
        if measure.NAME == ERR_NAME:
            values[measure] = _err_values(measure, rankings, max_grade)
    for provider, group in _provider_groups(
            [m for m in measures if m.NAME != ERR_NAME]).values():
        values.update(_provider_values(provider, group, qrels, run, len(rankings)))
    return {m: values[m] for m in measures}


def _err_values(measure: Measure, rankings: Sequence[Ranked], max_grade: int) -> list[float]:
    """ERR per ranking by the live metrics' formula, at the measure's cut-off or, without one,
    the ranking's whole depth."""
    depth = cutoff(measure)
    return [err_at([r.grades.get(d) for d in r.documents],
                   len(r.documents) if depth is None else depth, max_grade)
            for r in rankings]


_Groups = dict[tuple[int, str], tuple[ir_measures.providers.Provider, list[Measure]]]


def _provider_groups(measures: Sequence[Measure]) -> _Groups:
    """The measures by the provider ir_measures would choose, an nDCG with its own gains in a
    group of its own (score's docstring says why)."""
    groups: _Groups = {}
    for measure in measures:
        provider = provider_of(measure)
        assert provider is not None  # parse() refused it otherwise
        alone = str(measure) if measure.NAME == "nDCG" and "gains" in measure.params else ""
        groups.setdefault((id(provider), alone), (provider, []))[1].append(measure)
    return groups


def _provider_values(provider: ir_measures.providers.Provider, group: list[Measure],
                     qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
                     rankings: int) -> dict[Measure, list[float]]:
    """One provider's values of ``group`` per ranking; a ranking it reports nothing for keeps
    the measure's default."""
    by_name = {str(m): [m.DEFAULT] * rankings for m in group}
    # look each result's measure up by identity (hashing one builds its repr)
    seen: dict[int, tuple[object, list[float]]] = {}
    for metric in provider.evaluator(group, qrels).iter_calc(run):
        measure = metric.measure
        known = seen.get(id(measure))
        if known is None or known[0] is not measure:
            known = seen[id(measure)] = measure, by_name[str(measure)]
        known[1][int(metric.query_id)] = metric.value
    return {m: by_name[str(m)] for m in group}


def err_at(grades: Iterable[int | None], k: int, max_grade: int) -> float:
    """ERR@k of a ranking given its documents' grades in rank order (None: not judged)."""
    err, remaining = 0.0, 1.0
    for rank, grade in enumerate(grades):
        if rank == k:
            break
        if grade:
            stop = ((1 << grade) - 1) / (1 << max_grade)
            err += remaining * stop / (rank + 1)
            remaining *= 1.0 - stop
    return err
