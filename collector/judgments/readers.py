"""What the judges' tools return, read into one
:class:`~collector.judgments.judgment_set.JudgmentSet`; and the topics and TREC runs the job pools
from.

Formats, recognised by content (not by file name):

* **Quepid Book export** (JSON with ``query_doc_pairs``): one grade per judgement, rater
  ``user_email`` (anonymous when absent); ``unrateable`` or ``judge_later`` judgements and a null
  rating are not judged. The application is ``--application``, else the one named by a book
  this job wrote (``<application> · searchpulse …``), else none.
* **Quepid ratings CSV** (header ``query,docid,rating``): an empty rating is not judged.
* **TREC qrels** (``topic iteration docid grade``) with ``--topics`` (``id<TAB>query``) and
  optionally ``--topic-applications`` (``id<TAB>application``): a negative grade is not judged
  (``-1`` is the old "judge me" template; trec_eval would count it as judged non-relevant).
  Document ids are percent-decoded, the inverse of what this job writes.
* **SRW judgments** (JSON with ``judgmentRatings``: the import body ``[{query, ratings:
  [{docId, rating}]}]`` or the older map ``{query: [{docId, rating}]}``): ratings are strings
  or numbers; an empty one is not judged.
* **judgments.csv** (``application,query,doc_id,rater,grade``), the set's own file.

Files without raters (CSV, qrels, SRW) take ``--rater``, else the file's name. A grade that is
not a number is not judged; so is a fraction where the format's grades are whole (qrels,
Quepid): a qrels grade of 2.5 is refused as trec_eval refuses it, not rounded to 3. A grade
above the scale ``0..max_grade`` is **bad input**, not an unjudged row: the judges used another
scale than the one configured, so every gain would be misread. Each such row is rejected with
its reason (``off_scale``), counted (:attr:`Reading.rejected`) and kept with its file and row
(:attr:`Reading.rejected_rows`), and :meth:`Reading.refusal` is the one line a command exits 3
with. SRW judgments and ``judgments.csv`` take real grades (SRW's ratings are real numbers).
Every row that is not a judgment is counted by reason (:attr:`Reading.not_judged`), never
silently dropped; a named rater's second grade of an item is counted and named
(:meth:`Reading.duplicates`). Queries are normalized as the collector stores them; a TREC topic
id standing for its query (``evaluate`` without ``--topics``) is kept exactly as written.
"""

from __future__ import annotations

import csv
import json
import logging
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from collector.errors import JudgmentsError
from collector.judgments.judgment_set import COLUMNS, JudgmentSet
from collector.outcomes import normalize_query
from collector.text_files import not_text

log = logging.getLogger(__name__)
BOOK_NAME_SEPARATOR = " · searchpulse "


def book_name(application: str, title: str) -> str:
    """The name of what this job hands out for ``application``; a Quepid book's is read back
    for its application (:func:`_read_book`)."""
    return f"{application}{BOOK_NAME_SEPARATOR}{title}"



DUPLICATE_EXAMPLES = 5  # items graded twice by one rater named in a summary
OFF_SCALE = "off_scale"
# The columns of a rejected row as kept (``judgments import`` writes them as rejected.csv).
REJECTED_COLUMNS = ("file", "row", "reason", "application", "query", "doc_id", "rater",
                    "grade")


@dataclass
class Reading:
    """Judgment rows read so far, the rows that were not judgments, by reason, and the items a
    named rater graded more than once (the later grade replaces the earlier, as Quepid upserts
    a judgement by user: counted per rater and the first few named, never silent)."""

    max_grade: int
    rows: list[tuple[str, str, str, str, float]] = field(default_factory=list)
    not_judged: Counter[str] = field(default_factory=Counter)
    regraded: Counter[str] = field(default_factory=Counter)  # per rater
    regraded_examples: list[str] = field(default_factory=list)
    # bad input, by reason, and each such row as read (REJECTED_COLUMNS)
    rejected: Counter[str] = field(default_factory=Counter)
    rejected_rows: list[tuple[str, int, str, str, str, str, str, str]] = field(
        default_factory=list)
    file: str = ""  # the file being read, and how many rows of it were offered
    offered: int = 0
    _normalized: dict[str, str] = field(default_factory=dict)  # a query's rows share its text
    _graded: dict[tuple[str, str, str, str], float] = field(default_factory=dict)

    def add(self, application: str, query: str, document: Any, rater: str,
            rating: Any, integer: bool = True, topic_id: bool = False) -> None:
        """One grade; ``integer``: the format's scale is whole grades (TREC qrels, whose
        trec_eval refuses 2.5; Quepid's scales), so a fraction is refused, not rounded.
        ``topic_id``: ``query`` is a TREC topic id standing for its query, kept exactly as
        written (``T1`` and ``t1`` are two topics, as trec_eval and ir_measures read them);
        query text is normalized as the collector stores it."""
        self.offered += 1
        if document is None or str(document) == "":
            self.not_judged["no_document"] += 1
            return
        if rating is None or (isinstance(rating, str) and not rating.strip()):
            self.not_judged["unrated"] += 1
            return
        try:
            grade = float(rating)
        except (TypeError, ValueError):
            self.not_judged["not_a_number"] += 1
            return
        if math.isnan(grade):
            self.not_judged["not_a_number"] += 1
            return
        if grade < 0:
            self.not_judged["negative"] += 1  # TREC's -1: "not judged yet"
            return
        if grade > self.max_grade:
            self.rejected[OFF_SCALE] += 1
            self.rejected_rows.append((self.file, self.offered, OFF_SCALE, application,
                                       str(query), str(document), rater, str(rating)))
            return
        if integer and not grade.is_integer():
            self.not_judged["not_an_integer"] += 1
            return
        query = str(query) if topic_id else self._normalized_query(str(query))
        if not query:
            self.not_judged["no_query"] += 1
            return
        document = str(document)
        if rater:
            self._regraded(application, query, document, rater, grade)
        self.rows.append((application, query, document, rater, grade))

    def _normalized_query(self, text: str) -> str:
        normalized = self._normalized.get(text)
        if normalized is None:
            normalized = self._normalized[text] = normalize_query(text)
        return normalized

    def _regraded(self, application: str, query: str, document: str, rater: str,
                  grade: float) -> None:
        key = (application, query, document, rater)
        earlier = self._graded.get(key)
        self._graded[key] = grade
        if earlier is None:
            return
        self.regraded[rater] += 1
        if len(self.regraded_examples) < DUPLICATE_EXAMPLES:
            self.regraded_examples.append(
                f"{rater} graded ({application or 'any application'}, {query!r}, {document}) "
                f"{earlier:g}, then {grade:g}: the later grade is kept")

    def duplicates(self) -> dict[str, Any]:
        """The summary's account of items graded again by the same rater."""
        return {"grades_replaced": sum(self.regraded.values()),
                "by_rater": dict(sorted(self.regraded.items())),
                "first": list(self.regraded_examples)}

    def refusal(self) -> str | None:
        """The one line a command refuses the judgments with (exit 3), or None: how many
        grades are above the scale, where the first is, and the setting that names the
        scale."""
        if not self.rejected_rows:
            return None
        file, row, _, _, query, document, _, grade = self.rejected_rows[0]
        count = self.rejected[OFF_SCALE]
        return (f"{count:,} grade{'s' if count != 1 else ''} above the scale 0..{self.max_grade} "
                f"(judgments.max_grade), first {file} judgment {row} ({query!r}, {document}): "
                f"{grade}; if the judges graded on another scale, set judgments.max_grade to "
                "its top")

    def judgment_set(self) -> JudgmentSet:
        return JudgmentSet.of(self.rows)


def _numbered_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            for line_number, line in enumerate(handle, start=1):
                if line.strip() and not line.startswith("#"):
                    yield line_number, line.rstrip("\n")
    except UnicodeDecodeError as error:
        raise JudgmentsError(f"{path}: {not_text(path, error)}") from None
    except OSError as error:
        raise JudgmentsError(f"{path}: {error.strerror}") from None


def _two_columns(path: str | Path, what: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for line_number, line in _numbered_lines(path):
        key, sep, value = line.partition("\t")
        if not sep or not value.strip():
            raise JudgmentsError(f"{path}:{line_number}: expected TOPIC<TAB>{what}")
        table[key.strip()] = value.split("\t")[0]
    if not table:
        raise JudgmentsError(f"{path}: no TOPIC<TAB>{what} line in it (empty): is it the "
                             "topics file the feedback job wrote (trec/topics.tsv)?")
    return table


def read_topics(path: str | Path) -> dict[str, str]:
    """``id<TAB>query`` lines (a third column, as older versions wrote, is ignored)."""
    return {topic: normalize_query(query) for topic, query in
            _two_columns(path, "QUERY").items()}


def read_topic_applications(path: str | Path) -> dict[str, str]:
    """``id<TAB>application`` lines: the application each TREC topic was mined from."""
    return {topic: application.strip() for topic, application in
            _two_columns(path, "APPLICATION").items()}


def _columns(path: str | Path, line_number: int, line: str, minimum: int) -> list[str]:
    fields = line.split()
    if len(fields) < minimum:
        raise JudgmentsError(f"{path}:{line_number}: expected at least {minimum} "
                             f"whitespace-separated fields, got {len(fields)}")
    return fields


def _topic_query(path: str | Path, line_number: int, topic: str,
                 topics: dict[str, str] | None) -> str:
    if topics is None:
        raise JudgmentsError(f"{path}: TREC files name topics by id; pass --topics FILE "
                             "(id<TAB>query) to map them to queries")
    if topic not in topics:
        raise JudgmentsError(f"{path}:{line_number}: topic {topic!r} is not in the topics file")
    return topics[topic]


@dataclass(frozen=True)
class Sources:
    """What names the rows of files that do not say it themselves."""

    topics: dict[str, str] | None = None
    topic_applications: dict[str, str] = field(default_factory=dict)
    rater: str | None = None
    application: str | None = None
    # without topics, a TREC topic id stands for its query (evaluate: qrels against runs)
    topic_ids_as_queries: bool = False


def _load_json(path: str | Path) -> Any:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise JudgmentsError(f"{path}: not valid JSON: {error}") from None


def _read_book(path: str | Path, book: dict[str, Any], sources: Sources,
               reading: Reading) -> None:
    name = str(book.get("name") or "")
    application = sources.application
    if application is None:
        application = name.partition(BOOK_NAME_SEPARATOR)[0] if BOOK_NAME_SEPARATOR in name \
            else ""
    pairs = book["query_doc_pairs"]
    if not isinstance(pairs, list):
        raise JudgmentsError(f"{path}: query_doc_pairs must be a list")
    for number, pair in enumerate(pairs, start=1):
        if not isinstance(pair, dict):
            raise JudgmentsError(f"{path}: query_doc_pairs[{number}] is not an object")
        query = pair.get("query_text", pair.get("query"))
        judgements = pair.get("judgements") or []
        if not judgements:
            reading.not_judged["unrated"] += 1
        for judgement in judgements:
            if not isinstance(judgement, dict):
                reading.not_judged["malformed"] += 1
            elif judgement.get("unrateable"):
                reading.not_judged["unrateable"] += 1
            elif judgement.get("judge_later"):
                reading.not_judged["judge_later"] += 1
            else:
                reading.add(application, query or "", pair.get("doc_id"),
                            str(judgement.get("user_email") or ""), judgement.get("rating"))


def _read_srw(path: str | Path, body: dict[str, Any], rater: str, application: str,
              reading: Reading) -> None:
    entries = body["judgmentRatings"]
    if isinstance(entries, dict):  # the plugin's first format: {query: [{docId, rating}]}
        entries = [{"query": q, "ratings": r} for q, r in entries.items()]
    if not isinstance(entries, list):
        raise JudgmentsError(f"{path}: judgmentRatings must be a list")
    for entry in entries:
        ratings = entry.get("ratings") if isinstance(entry, dict) else None
        if not isinstance(ratings, list):
            raise JudgmentsError(f"{path}: every judgmentRatings entry needs a ratings list")
        if not ratings:
            reading.not_judged["unrated"] += 1
        for rating in ratings:
            if not isinstance(rating, dict):
                reading.not_judged["malformed"] += 1
            else:  # SRW's ratings are real numbers (COEC, LLM judgments, implicit relevance)
                reading.add(application, entry.get("query") or "",
                            rating.get("docId"), rater, rating.get("rating"), integer=False)


def _read_csv(path: str | Path, rater: str, application: str, reading: Reading) -> bool:
    """Quepid's ratings CSV or the set's own file; False when ``path`` is neither."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        header = [c.strip().lower() for c in next(reader, [])]
        add = reading.add
        if header == list(COLUMNS):
            for row in reader:
                if len(row) >= 5:  # the set's own file keeps what the set held (SRW's reals)
                    add(row[0], row[1], row[2], row[3], row[4], integer=False)
                elif any(row):
                    reading.not_judged["malformed"] += 1
            return True
        if "query" not in header or "rating" not in header or not (
                {"docid", "doc_id"} & set(header)):
            return False
        columns = (header.index("query"),
                   header.index("docid" if "docid" in header else "doc_id"),
                   header.index("rating"))
        width = max(columns) + 1
        for row in reader:
            if len(row) >= width:
                add(application, row[columns[0]], row[columns[1]], rater, row[columns[2]])
            elif any(row):
                reading.not_judged["malformed"] += 1
        return True


def _read_qrels(path: str | Path, sources: Sources, rater: str, reading: Reading) -> None:
    for line_number, line in _numbered_lines(path):
        topic, _, document, grade = _columns(path, line_number, line, 4)[:4]
        as_id = sources.topics is None and sources.topic_ids_as_queries
        query = topic if as_id else _topic_query(path, line_number, topic, sources.topics)
        application = sources.topic_applications.get(topic, sources.application or "")
        reading.add(application, query, unquote(document), rater, grade, topic_id=as_id)


def read_judgments(paths: Iterable[str | Path], sources: Sources, max_grade: int) -> Reading:
    """Every file of ``paths`` into one reading (format by content). A file that holds no row
    at all, judged or not (empty, a header alone), is refused by name: it is the wrong file or
    an export that failed, and read as nothing it would quietly judge nothing."""
    reading = Reading(max_grade)
    for path in paths:
        reading.file, reading.offered = str(path), 0
        before = reading.not_judged.total()
        try:
            _read_file(path, sources, reading)
            if not reading.offered and reading.not_judged.total() == before:
                raise JudgmentsError(f"{path}: holds no judgments (an empty file, or a header "
                                     "alone): is it the file the judges' tool exported?")
        except UnicodeDecodeError as error:
            raise JudgmentsError(f"{path}: {not_text(path, error)}") from None
        except OSError as error:
            raise JudgmentsError(f"{path}: {error.strerror}") from None
    if reading.regraded:
        log.warning("%d items graded again by the same rater (the later grade kept): %s",
                    sum(reading.regraded.values()), "; ".join(reading.regraded_examples))
    return reading


def _read_file(path: str | Path, sources: Sources, reading: Reading) -> None:
    rater = sources.rater or Path(path).name
    with open(path, encoding="utf-8-sig") as handle:
        start = handle.read(4096).lstrip()[:1]
    if start in ("{", "["):
        document = _load_json(path)
        if isinstance(document, dict) and "query_doc_pairs" in document:
            _read_book(path, document, sources, reading)
        elif isinstance(document, dict) and "judgmentRatings" in document:
            _read_srw(path, document, rater, sources.application or "", reading)
        else:
            raise JudgmentsError(f"{path}: JSON that is neither a Quepid book "
                                 "(query_doc_pairs) nor SRW judgments (judgmentRatings)")
    elif not _read_csv(path, rater, sources.application or "", reading):
        _read_qrels(path, sources, rater, reading)


def read_run_rankings(path: str | Path, topics: dict[str, str] | None
                      ) -> dict[tuple[str, str], list[str]]:
    """Every (topic, query)'s documents of a TREC run file, ordered by the rank column (not
    by score: the file's order is the ranking), a repeated document kept at its best rank.
    Without ``topics`` the topic id is the query."""
    ranked: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for line_number, line in _numbered_lines(path):
        topic, _, document, rank = _columns(path, line_number, line, 6)[:4]
        try:
            position = int(rank)
        except ValueError:
            raise JudgmentsError(
                f"{path}:{line_number}: rank {rank!r} is not an integer") from None
        query = topic if topics is None else _topic_query(path, line_number, topic, topics)
        ranked.setdefault((topic, query), []).append((position, unquote(document)))
    if not ranked:
        raise JudgmentsError(f"{path}: no TREC run line in it (empty): is it the run the "
                             "ranker wrote?")
    return {key: list(dict.fromkeys(_by_rank(entries))) for key, entries in ranked.items()}


def _by_rank(entries: list[tuple[int, str]]) -> Iterator[str]:
    """Documents by rank; a tie in rank ordered as trec_eval and gdeval order a tie in score
    (document id descending), so a run whose score follows its rank scores as they score it."""
    by_document = sorted(entries, key=lambda entry: entry[1], reverse=True)
    return (document for _, document in sorted(by_document, key=lambda entry: entry[0]))


def read_run(path: str | Path, topics: dict[str, str] | None,
             depth: int) -> dict[str, list[str]]:
    """The top ``depth`` documents per query of a TREC run file, by rank."""
    if topics is None:
        raise JudgmentsError(f"{path}: TREC files name topics by id; pass --topics FILE "
                             "(id<TAB>query) to map them to queries")
    ranked: dict[str, list[str]] = {}
    for (_, query), documents in read_run_rankings(path, topics).items():
        ranked.setdefault(query, documents[:depth])
    return ranked
