"""Judged relevance of what production showed: each search whose query is in the judgment set is
scored on the ranking it returned (its first page's ``query_response_hit_ids``, top 10).

* **NDCG@10** — exponential gain 2^g − 1, discount log2(rank + 1), ideal from *all* judged
  documents of the query (the best 10 of them), unjudged documents gain 0; a query whose judged
  documents are all grade 0 scores 0 (trec_eval's convention, so ``evaluate`` agrees);
* **ERR@10** — Σ_r (1/r) · R_r · Π_{i<r} (1 − R_i), R = (2^g − 1) / 2^max_grade;
* **judged coverage@10** — the share of the shown top 10 (or of all shown, when fewer) that has
  a grade: how much of what production shows the judgment set still knows.

A judgment row without an application stands for every application; one with an application
wins for that application. The set is loaded once and shared by every engine of a process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import log2
from pathlib import Path

from collector.watched_file import WatchedFile

DEPTH = 10
DISCOUNT = tuple(1.0 / log2(rank + 2) for rank in range(DEPTH))
RECIPROCAL = tuple(1.0 / (rank + 1) for rank in range(DEPTH))
GAIN = tuple((1 << grade) - 1 for grade in range(31))
MEMO = 24  # rankings and grade sequences remembered per judged query


class JudgedQuery:
    """One (application, query)'s grades and its ideal DCG@10."""

    __slots__ = ("grades", "ideal", "scored")

    def __init__(self, grades: dict[str, int]) -> None:
        # Grades are small ints, CPython's shared objects: a lookup touches no per-document
        # value (the scoring runs between the hot path's lookups, on a cold cache).
        self.grades: dict[str | int, int] = dict(grades)
        # UBI hit ids may be JSON numbers: a numeric id is found under its int form too
        self.grades.update((int(d), g) for d, g in grades.items() if d.isdigit() and len(d) < 19)
        # Scores of the last few rankings shown, under two keys (int and tuple: never equal).
        # The ranking's 64-bit hash: a query's ranking rarely changes between searches, so most
        # searches are one hash and a lookup (text ids hash with a per-process key: two rankings
        # collide with odds ~2^-64; integer ids hash to themselves modulo 2^61 − 1, so only ids
        # differing by a multiple of that could share a score). Its grades, in rank order: a
        # ranking that differs by documents the set does not grade, or by documents of equal
        # grade, scores the same, so fresh or personalised results are ten lookups, not a
        # scoring (measured on the simulated log: 55 % of searches hit by the first key, 80 %
        # by either). First in, first out, so a ranking that changed for good stops taking a place.
        self.scored: dict[int | tuple[int | None, ...], tuple[float, float, float]] = {}
        best = sorted(grades.values(), reverse=True)[:DEPTH]  # the given grades, once each
        self.ideal = sum(((1 << g) - 1) * d for g, d in zip(best, DISCOUNT, strict=False))


class JudgedRankings:
    """Final grades by query, then application ("" = every application)."""

    def __init__(self, final: Iterable[tuple[str, str, str, int]], max_grade: int) -> None:
        grades: dict[str, dict[str, dict[str, int]]] = {}
        for application, query, document, grade in final:
            grades.setdefault(query, {}).setdefault(application, {})[document] = int(grade)
        self.queries = {query: {application: JudgedQuery(documents)
                                for application, documents in by_application.items()}
                        for query, by_application in grades.items()}
        self.max_grade = max_grade
        self._stops = tuple(((1 << g) - 1) / (1 << max_grade) for g in range(max_grade + 1))

    def __len__(self) -> int:
        return sum(len(by_application) for by_application in self.queries.values())

    def lookup(self, application: str, query: str) -> JudgedQuery | None:
        by_application = self.queries.get(query)
        return None if by_application is None else of_application(by_application, application)

    def score(self, judged: JudgedQuery, shown: Sequence[str | int]
              ) -> tuple[float, float, float]:
        """(NDCG@10, ERR@10, judged coverage@10) of the non-empty ranking ``shown``."""
        top = tuple(shown[:DEPTH]) if shown.__class__ is not tuple or len(shown) > DEPTH else shown
        key = hash(top)
        memo = judged.scored
        scored = memo.get(key)
        if scored is not None:
            return scored
        grades = tuple(map(judged.grades.get, top))
        scored = memo.get(grades)
        if scored is None:
            scored = memo[grades] = self._scored(judged, grades)
        memo[key] = scored
        while len(memo) > MEMO:
            del memo[next(iter(memo))]
        return scored

    def _scored(self, judged: JudgedQuery, grades: tuple[int | None, ...]
                ) -> tuple[float, float, float]:
        """(NDCG@10, ERR@10, judged coverage@10) of a ranking whose grades are ``grades``."""
        stops = self._stops
        dcg = err = 0.0
        remaining = 1.0
        covered = 0
        for grade, discount, reciprocal in zip(grades, DISCOUNT, RECIPROCAL, strict=False):
            if grade is not None:
                covered += 1
                if grade:
                    dcg += GAIN[grade] * discount
                    stop = stops[grade]
                    err += remaining * stop * reciprocal
                    remaining *= 1.0 - stop
        return (dcg / judged.ideal if judged.ideal else 0.0), err, covered / len(grades)


def of_application(by_application: dict[str, JudgedQuery], application: str
                   ) -> JudgedQuery | None:
    """A query's grades for ``application``, else those for every application ("")."""
    found = by_application.get(application)
    return found if found is not None else by_application.get("")


def load(path: str | Path, max_grade: int) -> JudgedRankings:
    """The final grades of every judgment file format ``searchpulse judgments`` reads."""
    # on use: the readers need pandas, which the live scorer without a judgment set never loads
    from collector.judgments.readers import Sources, read_judgments

    final = read_judgments([path], Sources(), max_grade).judgment_set().final()
    return JudgedRankings(zip(*(final[c].tolist() for c in ("application", "query", "doc_id",
                                                              "grade")), strict=True), max_grade)


class JudgmentsFile(WatchedFile[JudgedRankings]):
    """``judgments.file``, reloaded when it changes: a new judgment set takes effect without a
    restart; a broken file keeps the last good set."""

    def __init__(self, path: str, max_grade: int) -> None:
        super().__init__(path, "judgments.file", lambda p: load(p, max_grade))
