"""The collector engine: raw record → decode → client clock → event-time order → sessions →
quality counts.

Every source (file replay, simulator, Kafka) feeds ``Engine.process_all`` records in arrival
order and calls ``close`` at the end of input. The engine owns no I/O beyond the dead-letter sink;
its time is the stream's own (``stream_clock``). The wall clock bounds one thing only: a record
stamped past it (by more than ``ordering.max_ahead_s``) while the stream is not there is from the
future — no vote can make it the stream's time (_from_the_future). Whatever the bytes, a record
never raises out of it: it is counted and dead-lettered with a reason.
"""

from __future__ import annotations

import time
from bisect import insort
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from heapq import heappop, heappush
from itertools import count
from math import ceil, inf

from collector.clock.application_clock import ApplicationClocks, ArrivalPosition
from collector.clock.arrival_clock import ArrivalClock
from collector.clock.exposure_gaps import ExposureGaps
from collector.clock.probation import AHEAD as HELD_AHEAD
from collector.clock.probation import QUORUM, UNVOUCHED_S, VOTES, HeldRecord, Probation
from collector.clock.stream_clock import (
    AHEAD,
    EVENT_AHEAD,
    EVENT_VS_SEARCH,
    SAMPLE_MASK,
    TICKS,
    Reference,
    StreamClock,
)
from collector.config import Config
from collector.exposition.view import View
from collector.ingest import accounting as acc
from collector.ingest.deadletter import DeadLetterSink, DiscardWithCount
from collector.ingest.events import (
    EARLIEST,
    LATEST,
    MISSING_QUERY_ID,
    NOT_QUERY_OR_EVENT,
    Rejected,
    WireFormat,
    WireRecord,
    event_time,
)
from collector.series.examination import ExaminationFile
from collector.series.judged_relevance import JudgmentsFile
from collector.series.quality import SeriesTable, reset_series
from collector.series.strata import StrataClassifier
from collector.series.units import UnitTracker, reset_experiment
from collector.series.zero_result_queries import QueryRelease, Released, TopZeroResultQueries
from collector.sessions.automated import AutomatedClients
from collector.sessions.event_outcomes import ACTIONS, EXPOSURE
from collector.sessions.search import PageAlias
from collector.sessions.sessionizer import Sessionizer
from collector.sessions.tracking import TrackingHealth
from collector.store.query_stats import QueryStats

_RELEASE_EVERY = 63  # release ready records every 64 arrivals (and at the end of each call):
# the order of application is the same, one call of _release serves many records
LATE = "late"
ORPHAN = "orphan"
_SUSPECT = 2  # _expose: an exposure stamped further from its search than exposures are
_QUERY, _EVENT = acc.QUERY, acc.EVENT
# Query ids of buffered searches an exposure was applied ahead of, kept at most (then pruned
# to the searches still buffered): bounds what searches that never come can leave behind.
_MAX_EXPOSED_EARLY = 65_536
# A buffered record: sorted by time, then queries before events, then content, then arrival.
Entry = tuple[float, int, str, bytes, int, WireRecord]


class Engine:
    """Turns UBI records into search-quality counts. Not thread-safe: one feeding thread."""

    def __init__(
        self,
        config: Config,
        dead_letters: DeadLetterSink | None = None,
        query_stats: QueryStats | None = None,
        judgments: JudgmentsFile | None = None,
        examination: ExaminationFile | None = None,
        wall_clock: Callable[[], float] = time.time,
        by_client: bool = False,
    ) -> None:
        """``judgments``: the judgment set to score live rankings against, ``examination``: the
        click model's curves, each shared by the engines of one process; default: the file of
        ``judgments.file`` / ``clicks.examination_file``, when set. ``wall_clock``: now, in
        Unix seconds (tests fix it): what no record's stamp can be past (_from_the_future).
        ``by_client``: experiment statistics clustered by client exactly, ``none`` included
        (offline reports only: collector/series/units.py)."""
        self.config = config
        self.dead_letters = dead_letters or DiscardWithCount()
        self.stats = acc.PipelineStats()
        self.table = SeriesTable(config["labels.application_cap"], config["labels.variant_cap"],
                                 config["metrics.latency_guardrail_s"],
                                 config["experiments.unit_buckets"],
                                 config["experiments.max_variants"], by_client)
        self.strata = StrataClassifier.from_config(config)
        self.sessions = Sessionizer(
            self.table, self.strata, self.stats,
            UnitTracker(config["experiments.unit_window_s"], config["experiments.max_units"],
                        config["metrics.latency_guardrail_s"], self.stats.data_quality),
            reformulation_s=config["windows.reformulation_s"],
            abandonment_s=config["windows.abandonment_s"],
            attribution_s=config["windows.attribution_s"],
            position_base=config["events.position_base"],
            zero_result_queries=TopZeroResultQueries(
                k=config["top_queries.size"], window_s=config["top_queries.window_s"],
                min_clients=config["privacy.min_distinct_clients"]),
            query_stats=query_stats,
            team_attribute=bool(config["events.team_attribute"]),
            keystroke_gap_s=config["intents.keystroke_gap_s"],
            max_edit=config["intents.max_edit"],
            typed_whole=frozenset(config["intents.off_applications"]),
            automated=AutomatedClients(
                config["automated.window_s"], config["automated.max_searches"],
                config["automated.max_repeats"], config["automated.max_silent"],
                config["automated.client_patterns"], config["automated.human_client_patterns"],
                config["automated.max_clients"]),
            tracking=TrackingHealth(config["tracking.untracked_below"]),
        )
        if judgments is None and config["judgments.file"]:
            judgments = JudgmentsFile(config["judgments.file"], config["judgments.max_grade"])
        self.judgments = judgments
        if judgments is not None:
            self.sessions.judged = judgments.current()
        self.examination = examination or ExaminationFile.from_config(config)
        if self.examination is not None:
            self.sessions.click_weights = self.examination.current().weights
        self.release = QueryRelease.from_config(config)
        self.wire = WireFormat(config["events.team_attribute"])
        self.clock = StreamClock(config["ordering.lateness_s"],
                                 config["ordering.clock_tolerance_s"],
                                 config["ordering.max_ahead_s"], config["windows.attribution_s"],
                                 self.stats, wall_clock)
        self.arrival_clock = ArrivalClock(config["ordering.clock_tolerance_s"])
        # how long after their searches exposures are stamped: a client's event clock
        self.exposure_gaps = ExposureGaps(config["ordering.clock_tolerance_s"])
        # Each application's clock against the stream's, and the offsets of those found off:
        # what every record of theirs is moved by first (usually none: one truth test).
        self.applications = ApplicationClocks(config["ordering.clock_tolerance_s"])
        self.app_offsets = self.applications.offsets
        self._warm_position = ArrivalPosition()  # where the warm-up's queries were
        self.probation = Probation()
        # A vote for a held record is stamped at most this much before it: a query may lead
        # the stream by max_ahead, an event its search's stream by the tolerance.
        self._slack = {_QUERY: config["ordering.max_ahead_s"],
                       _EVENT: config["ordering.clock_tolerance_s"]}
        self.idle_s = config["ordering.idle_s"]
        self.wall_clock = wall_clock
        self.max_ahead = config["ordering.max_ahead_s"]
        # The event-time buffer: a calendar queue of 1 / TICKS s buckets (unsorted until
        # released; the watermark moves in whole buckets), ``order`` a heap of their numbers.
        # An append per record and one C sort per bucket instead of a heap push and pop.
        self.buckets: dict[int, list[Entry]] = {}
        self.order: list[int] = []
        self.arrival = count()  # last tie-break: identical records keep arrival order
        self.pending: dict[str, Entry] = {}  # query_id → its entry, of queries still buffered
        # Records held until the clock exists: (time, kind, raw, record, the clock they are
        # judged against, their arrival if known).
        self.warmup: list[tuple[float, int, bytes, WireRecord, Reference | None,
                                float | None]] | None = []
        # The newest (corrected) time buffered of a record that fitted the stream (within the
        # tolerance or the spread past its edge) or was corrected, and of one that stood
        # further ahead (within max_ahead): the first is where the stream is, both are news.
        self.settled = -inf
        self.ahead = -inf
        self.last_arrival = -inf  # when the last record arrived (its Kafka timestamp), if known
        self.idle_from: float | None = None  # where the stream was when the source went idle
        # Where a record from the future is moved to when nothing else says where the stream
        # is (the first records of a stream): the median of the warm-up's others.
        self._present = -inf
        self.closed = False

    # -- input -----------------------------------------------------------------------------
    def process(self, raw: bytes) -> None:
        """Apply one raw record."""
        self.process_all((raw,))

    def process_all(self, raws: Iterable[bytes],
                    arrivals: Sequence[float] | None = None) -> None:
        """Apply records in arrival order; ``arrivals``: when each arrived (Unix seconds: a
        Kafka record's timestamp, collector/clock/arrival_clock.py), one per record, if known.

        The hot path: each record is decoded and classified here, with the names it uses
        as locals (event_time's common case inline), then placed (_place); the rare
        outcomes — ignored, rejected, failed — are named steps of their own."""
        stats = self.stats
        actions = ACTIONS
        place = self._place
        wire = self.wire.decode
        for n, raw in enumerate(raws):
            kind = acc.UNKNOWN
            try:
                rec = wire(raw)
                if rec.action_name is not None:
                    kind = _EVENT
                    action = actions.get(rec.action_name)
                    if not rec.query_id or action is None:
                        self._ignore(rec)
                        continue
                elif rec.user_query is not None:
                    kind, action = _QUERY, None
                    if not rec.query_id:
                        raise Rejected(MISSING_QUERY_ID, "a query record needs query_id")
                else:
                    raise Rejected(NOT_QUERY_OR_EVENT, "neither action_name nor user_query")
                stamp = rec.timestamp  # event_time's common case, inline
                if stamp.__class__ is datetime and stamp.tzinfo is not None:
                    ts = stamp.timestamp()
                    if not EARLIEST <= ts <= LATEST:
                        ts = event_time(rec)  # raises its Rejected
                else:
                    ts = event_time(rec)
            except Rejected as rejected:
                stats.records[kind][acc.INVALID] += 1
                stats.invalid[rejected.reason] += 1
                self._dead_letter(raw, rejected.reason, rejected.detail)
                continue
            except Exception as error:  # a poison record never stops the engine
                self._unexpected(kind, raw, error)
                continue
            place(ts, kind, action, raw, rec, None if arrivals is None else arrivals[n])
            if not n & _RELEASE_EVERY:
                self._release()
        if arrivals:
            self.last_arrival = arrivals[-1]
        self.idle_from = None  # records came: a later idle spell starts from them
        self._release()

    def _ignore(self, rec: WireRecord) -> None:
        """An event with no query id or of an action no metric uses: counted as ignored, by
        reason, and nothing else (it is not bad input: UBI allows both)."""
        self.stats.ignored[acc.NO_QUERY_ID if not rec.query_id else acc.UNUSED_ACTION] += 1
        self.stats.records[_EVENT][acc.IGNORED] += 1

    def _place(self, ts: float, kind: int, action: int | None, raw: bytes, rec: WireRecord,
               arrived: float | None) -> None:
        """Where a decoded record goes, in the order the stream clock decides it: its stamp
        is first a vote for the records on probation (_vote); a record its arrival time
        (``arrived``, if known) puts elsewhere is retimed there; one that does not fit the
        stream as stamped (_take_unfitted) waits for the clock or has its client's clock
        judged. The rest — the hot case, inline: its arrival agrees, or its stamp is within
        the clock's bounds and its client is neither skewed nor on probation (_suspect) —
        is taken at its stamp: an exposure whose outcome is known is applied now (_expose),
        any other record is buffered (_buffer's hot case); its stamp is where the stream is
        (it settles the edge; one in a sample is the clock's, _sample_stamp)."""
        clock = self.clock
        probation = self.probation
        if self.app_offsets and self.warmup is None:  # an application's clock is off
            ts = self._aligned(ts, kind, rec)
        if probation.held:
            self._vote(ts, rec)
        if arrived is not None and (moved := self.arrival_clock.offset(kind, ts, arrived)
                                    ) is not None:
            if moved:  # off by its own arrival: put where it came
                self._retime(ts, moved, kind, raw, rec, acc.ARRIVAL_CLOCK)
                return
        elif not clock.low <= ts <= clock.high or (
                (clock.skewed or probation.clients) and self._suspect(rec)):
            self._take_unfitted(ts, kind, raw, rec, arrived)
            return
        if action == EXPOSURE and (exposed := self._expose(rec, ts)):
            if exposed == _SUSPECT:  # not where its search puts an exposure: judged
                self._take_unfitted(ts, kind, raw, rec, arrived)
                return
        else:
            entry = (ts, kind, rec.query_id, raw, next(self.arrival), rec)
            if kind == _QUERY:
                self.pending.setdefault(rec.query_id, entry)
                clock.note_query(ts)
            buckets = self.buckets
            bucket = buckets.get(number := int(ts * TICKS))
            if bucket is None:
                buckets[number] = [entry]
                heappush(self.order, number)
            else:
                bucket.append(entry)
        if ts > self.settled:
            self.settled = ts
        if not int(ts * 1000.0) & SAMPLE_MASK:  # (placed by its arrival: not its application)
            self._sample_stamp(ts, kind, rec, arrived is None or moved is None)

    def _aligned(self, ts: float, kind: int, rec: WireRecord) -> float:
        """A record of an application whose clock is off, moved onto the stream by that
        application's offset (counted); any other as it is."""
        shift = self.app_offsets.get(self._application_of(kind, rec))
        if shift is None or not shift[kind]:
            return ts
        off = shift[kind]
        self.stats.retimed[acc.APPLICATION_CLOCK] += 1
        if off > self.max_ahead and self._from_the_future(ts):
            self.stats.future[acc.KINDS[kind]] += 1
        return ts - off

    def _application_of(self, kind: int, rec: WireRecord) -> str | None:
        """A record's application; an event that names none is of its search's (UBI's
        page_exit), when the search was seen."""
        application = rec.application
        if application is not None or kind != _EVENT:
            return application
        entry = self.pending.get(rec.query_id)
        if entry is not None:
            return entry[5].application
        target = self.sessions.searches.get(rec.query_id)
        if target is None:
            return None
        search = target.search if target.__class__ is PageAlias else target
        if search.record is not None:  # undecided: its query record
            return search.record.application
        return search.series.application if search.series is not None else None

    def _sample_lead(self, ts: float, kind: int, rec: WireRecord, at: float) -> None:
        """A sampled record's lead over where the stream was at its arrival (``at``), by its
        raw stamp (``ts`` moved back by its application's offset): its application's clock."""
        application = self._application_of(kind, rec)
        applications = self.applications
        before = applications.offset(application, kind)
        if applications.sample(application, kind, ts + before - at,
                               rec.client_id or rec.session_id):
            change = applications.offset(application, kind) - before
            if change > self.clock.tolerance:
                self._realign_buffered(application, kind, change)
            if self.probation.held:
                self._realign_held(application, kind, change)

    def _realign_buffered(self, application: str | None, kind: int, change: float) -> None:
        """An application found ahead: its records buffered as stamped ahead of the stream
        (within max_ahead, waiting for it) are moved by its offset too, so that each of its
        sessions is on one clock."""
        clock = self.clock
        ahead = int((clock.edge + clock.tolerance) * TICKS)
        moved = []
        for number, bucket in self.buckets.items():
            if number > ahead:
                keep = []
                for entry in bucket:
                    if entry[1] == kind and self._application_of(kind, entry[5]) == application:
                        moved.append(entry)
                    else:
                        keep.append(entry)
                bucket[:] = keep
        for ts, _, key, raw, _, rec in moved:
            if kind == _QUERY and self.pending.get(key, (None,))[0] == ts:
                del self.pending[key]
            self._retime(ts, change, kind, raw, rec, acc.APPLICATION_CLOCK)

    def _realign_held(self, application: str | None, kind: int, change: float) -> None:
        """An application's offset changed: its records held on probation were held where the
        old one put them; they are judged again where the new one does."""
        moved = [record for record in self.probation.held if record.kind == kind
                 and self._application_of(kind, record.rec) == application]
        self.probation.release(moved)
        for record in moved:
            self.stats.retimed[acc.APPLICATION_CLOCK] += 1
            self._admit(record.ts - change, kind, record.raw, record.rec, record.at)

    def _vote(self, ts: float, rec: WireRecord) -> None:
        """With records on probation, a record stamped where the clock stands is a vote of
        its client on where the stream is; what the votes decide is admitted."""
        clock = self.clock
        if clock.current(ts):
            self._settle(self.probation.vote(ts, rec.client_id or rec.session_id,
                                             clock.reach(), clock.event_reach()))

    def _suspect(self, rec: WireRecord) -> bool:
        """A record whose client's clock is known to be off, or whose client has records on
        probation: its stamp alone does not say where it belongs."""
        client = rec.client_id or rec.session_id
        return client in self.clock.skewed or client in self.probation.clients

    def _take_unfitted(self, ts: float, kind: int, raw: bytes, rec: WireRecord,
                       arrived: float | None) -> None:
        """A record that does not fit the stream as stamped: before the clock exists, it
        waits in the warm-up (_keep_for_warmup); after, its client's clock is judged
        (_admit)."""
        if self.warmup is not None:
            self._keep_for_warmup(ts, kind, raw, rec, arrived)
        else:
            if not int(ts * 1000.0) & SAMPLE_MASK:
                self._sample_lead(ts, kind, rec, self.clock.edge)
            self._admit(ts, kind, raw, rec)

    def _sample_stamp(self, ts: float, kind: int, rec: WireRecord, lead: bool) -> None:
        """A record taken at its stamp and in the sample (``SAMPLE_MASK``) tells the
        clock where the stream is, who is active in it and (``lead``: once there is a clock,
        when its arrival did not place it) how its application's clock stands; arrivals in
        the warm-up may make the clock ready, which ends the warm-up."""
        clock = self.clock
        if lead and self.warmup is None:
            self._sample_lead(ts, kind, rec, clock.edge)
        clock.sample(ts, rec.client_id or rec.session_id)
        if self.warmup is not None and clock.ready:
            self._end_warmup(judge=True)

    def _keep_for_warmup(self, ts: float, kind: int, raw: bytes, rec: WireRecord,
                         arrived: float | None) -> None:
        """Before the clock exists, a record that does not fit waits in the warm-up with the
        clock as it stood at its arrival; every raw stamp is sampled, and the sample that
        makes the clock ready ends the warm-up."""
        clock = self.clock
        at = clock.at_arrival()
        self.warmup.append((ts, kind, raw, rec, at, arrived))
        arrived_at = self._warm_position.note(ts, kind == _QUERY)
        if arrived_at is not None:  # every record's lead over the queries before it
            self.applications.sample(self._application_of(kind, rec), kind, ts - arrived_at,
                                     rec.client_id or rec.session_id)
        if kind == _QUERY and at is not None and clock.fits(ts, at):  # where the stream is:
            clock.note_query(ts)  # the edge and spread the next held records are judged by
        if not int(ts * 1000.0) & SAMPLE_MASK:  # before the clock: every raw stamp
            clock.sample(ts, rec.client_id or rec.session_id)
            if clock.ready:
                self._end_warmup(judge=True)

    def _admit(self, ts: float, kind: int, raw: bytes, rec: WireRecord,
               at: Reference | None = None, judge: bool = True, verdict: int = 0) -> None:
        """Correct one decoded record's time by its client's clock offset (_client_offset)
        and buffer it, or hold it on probation when it looks ahead of the stream
        (``verdict``: what probation decided for a held record). Only records whose time
        stands as stamped move the stream's edge; ``at``: the clock a record held in the
        warm-up is judged against."""
        client = (rec.client_id or rec.session_id) if judge else None
        if client:
            if not verdict and client in self.probation.clients:  # its client's record waits
                self._hold(self._held(ts, kind, raw, rec, client, at))
                return
            offset = self._client_offset(ts, kind, raw, rec, client, at, verdict)
            if offset is None:  # held on probation
                return
            if offset:
                self._retime(ts, offset, kind, raw, rec, acc.CLIENT_OFFSET)
                return
        clock = self.clock
        if ts < clock.watermark:
            self._apply_late(kind, rec, ts, raw)
        else:
            if at is None and not int(ts * 1000.0) & SAMPLE_MASK:  # (warm-up: sampled already)
                clock.sample(ts, client)  # it stands as stamped: where the stream is
            self._buffer(ts, kind, rec, raw, True)

    def _client_offset(self, ts: float, kind: int, raw: bytes, rec: WireRecord, client: str,
                       at: Reference | None, verdict: int) -> float | None:
        """How far the client's clock is off for this record: as known (revised when the
        stamp explains the record better), else judged now (_judge_client; None: held on
        probation); re-judged when the corrected time would be stale — decided, or held,
        where the stream was (a sparse stream's front lags; an idle spell moved it on): the
        record would be lost so."""
        clock = self.clock
        search = self._search_window(rec) if kind == _EVENT else None
        offset = known = clock.offset(kind, client)
        if offset is None:
            offset = self._judge_client(ts, kind, raw, rec, client, at, verdict, search)
            if offset is None:
                return None
        elif offset:
            offset = clock.revise(kind, client, ts, offset, search, at)
        if (known is not None or offset or verdict) and ts - offset < clock.watermark:
            offset = clock.rejudge(kind, client, ts)
        return offset

    def _judge_client(self, ts: float, kind: int, raw: bytes, rec: WireRecord, client: str,
                      at: Reference | None, verdict: int,
                      search: tuple[float, float] | None) -> float | None:
        """A client's first record of this kind: the stream clock judges its offset and keeps
        it. One that looks ahead of the stream is held on probation first (the stream may be
        there too: other clients will say; None); once probation decided, it is ahead only
        if the votes said so."""
        clock = self.clock
        by_gap = (self.exposure_gaps.offset(ts - search[0])
                  if search is not None and ACTIONS.get(rec.action_name) == EXPOSURE else None)
        if by_gap is not None:  # an exposure: its client's clock by its search's (exactly)
            return clock.keep(kind, client, by_gap, EVENT_VS_SEARCH if by_gap else "")
        offset, reason = clock.judge(kind, client, ts, search, at)
        if reason == AHEAD or reason == EVENT_AHEAD:
            if not verdict:
                if not self._from_the_future(ts):
                    self._hold(self._held(ts, kind, raw, rec, client, at))
                    return None
                verdict = HELD_AHEAD  # no lull ends after now: no vote can make it the stream's
            if verdict != HELD_AHEAD:
                offset, reason = 0.0, ""  # they said the stream is there
            elif reason == EVENT_AHEAD:
                reason = EVENT_VS_SEARCH if search is not None else AHEAD
        elif not offset and self._from_the_future(ts):  # the stream's first records: none
            # says where it is but the others (or the edge, or now)
            present = next(t for t in (self._present, clock.edge, self.wall_clock()) if t > -inf)
            offset, reason = ts - present, AHEAD
        clock.keep(kind, client, offset, reason)
        return offset

    def _retime(self, stamp: float, offset: float, kind: int, raw: bytes, rec: WireRecord,
                reason: str) -> None:
        """A record at its corrected time (its ``stamp`` − ``offset``): it moves none of the
        stream's references. One stamped in the future is counted as such."""
        self.stats.retimed[reason] += 1
        if offset > 0 and self._from_the_future(stamp):
            self.stats.future[acc.KINDS[kind]] += 1
        ts = stamp - offset
        if ts < self.clock.watermark:
            self._apply_late(kind, rec, ts, raw)
        else:
            self._buffer(ts, kind, rec, raw, False)

    def _from_the_future(self, ts: float) -> bool:
        """Stamped more than ``max_ahead`` past the wall clock while the stream is not there:
        no record can be stamped after now but by a clock that runs ahead. (A synthetic log
        dated ahead of the wall clock is a stream of its own: its clock is past it, and its
        records are judged by the stream's rules alone.)"""
        bound = self.wall_clock() + self.max_ahead
        return ts > bound and self.clock.median() <= bound

    def _held(self, ts: float, kind: int, raw: bytes, rec: WireRecord, client: str,
              at: Reference | None) -> HeldRecord:
        """A record to hold on probation: its votes come from other clients, and it stands
        only on the votes of a real share (``QUORUM``) of the clients active where the
        stream is — not of a few dozen records that arrived together (a burst of clocks
        ahead vouches for itself)."""
        edge = (at or self.clock.reference()).edge
        need = ceil(QUORUM * self.clock.active_clients(edge - self.max_ahead))
        return HeldRecord(ts, kind, raw, rec, client, at, self._slack[kind], max(VOTES, need))

    def _hold(self, record: HeldRecord) -> None:
        self._settle(self.probation.hold(record))

    def _settle(self, released: list[HeldRecord]) -> None:
        """Admit what probation released, in arrival order, then whatever that let go (a
        query that stands moves the edge other held records are judged by)."""
        while released:
            for record in released:
                self._admit(record.ts, record.kind, record.raw, record.rec, record.at,
                            verdict=record.verdict)
            released = self.probation.ready(self.clock.reach(), self.clock.event_reach())

    def _buffer(self, ts: float, kind: int, rec: WireRecord, raw: bytes,
                standing: bool) -> None:
        """Into the event-time buffer; an event is never before a search still buffered."""
        entry = (ts, kind, rec.query_id, raw, next(self.arrival), rec)
        if kind == _QUERY:
            self.pending.setdefault(rec.query_id, entry)  # a redelivered copy is not its time
            if standing:
                self.clock.note_query(ts)
        self._push(entry)
        if not standing or ts <= self.clock.high:
            if ts > self.settled:
                self.settled = ts
        elif ts > self.ahead:
            self.ahead = ts

    def _push(self, entry: Entry) -> None:
        bucket = self.buckets.get(number := int(entry[0] * TICKS))
        if bucket is None:
            self.buckets[number] = [entry]
            heappush(self.order, number)
        else:
            bucket.append(entry)

    def _search_window(self, rec: WireRecord) -> tuple[float, float] | None:
        """(time, end of attribution) of the search an event names, if it was seen."""
        entry = self.pending.get(rec.query_id)
        if entry is not None:
            ts = entry[0]
        else:
            target = self.sessions.searches.get(rec.query_id)
            if target is None:
                return None
            ts = target.search.ts if target.__class__ is PageAlias else target.ts
        return ts, ts + self.sessions.attribution_s

    def _expose(self, rec: WireRecord, ts: float) -> int:
        """Apply an exposure (a third of all records) at once when its outcome is already
        known — the one the buffer would give it — and say so (1); else it is buffered (0).
        One stamped further from its search than exposures are (_SUSPECT) has its client's
        event clock judged (collector/clock/exposure_gaps.py).

        An exposure only counts: accepted while its search is attributable, else an orphan.
        Its search applied: attributable at ``ts`` unless its window has closed by then. Its
        search buffered (a first page, no per-query store: shown documents need the applied
        search): applied at or after the search, inside its window."""
        sessions = self.sessions
        key = rec.query_id
        gaps = self.exposure_gaps
        target = sessions.searches.get(key)
        if target is not None:
            if not gaps.low <= ts - target.ts <= gaps.high:
                return _SUSPECT
            if key != gaps.last:  # one per search
                gaps.sample(key, ts - target.ts)
            if ts > target.ts + sessions.attribution_s:
                return 0
            self.stats.records[_EVENT][sessions.on_event(rec, ts)] += 1
            return 1
        entry = self.pending.get(key)
        if entry is None:
            return 0
        search_ts = entry[0]
        if not gaps.low <= ts - search_ts <= gaps.high:
            return _SUSPECT
        if key != gaps.last:
            gaps.sample(key, ts - search_ts)
        attrs = entry[5].query_attributes
        if (sessions.query_stats is not None or ts > search_ts + sessions.attribution_s
                or (attrs is not None and attrs.page is not None and attrs.page > 1)):
            return 0  # an orphan, or a page whose search may not be tracked
        if ts < search_ts:  # stamped before its search: applied at it
            self.stats.retimed[acc.BEFORE_SEARCH] += 1
        early = sessions.exposed_early  # its search received an event: tracking health
        if len(early) >= _MAX_EXPOSED_EARLY:  # ids of searches never applied (late, lost)
            early.intersection_update(self.pending)
        early.add(key)
        self.stats.records[_EVENT][acc.ACCEPTED] += 1
        return 1

    def _end_warmup(self, judge: bool) -> None:
        """The clock exists: judge the held records' clients (``judge``), each against the
        clock of the samples before it, and buffer them. None of them is late. Each is also
        a vote on the ones put on probation before it, as if it arrived now."""
        held, self.warmup = self.warmup or [], None
        clock, probation = self.clock, self.probation
        if self.app_offsets:  # an application's clock is off: the warm-up again, realigned
            held = self._realigned(held)
        self.applications.restart()  # its leads were against the median, then the edge
        self._learn_exposure_gaps(held)
        start = clock.start_of_stream()
        before: list[float] = []  # the stamps of the records before each
        fence = start.edge + clock.max_ahead  # the whole window's: past it is not the stream
        bound = self.wall_clock() + self.max_ahead
        present = sorted(ts for ts, *_ in held if ts <= bound)
        self._present = present[len(present) // 2] if present else bound - self.max_ahead
        watermark, clock.watermark = clock.watermark, -inf
        try:
            for ts, kind, raw, rec, at, arrived in held:  # sampled as they arrived
                if at is None or at.edge > fence:  # no clock yet at its arrival, or one a
                    at = clock.after_start(start, before)  # burst ahead made (its samples)
                insort(before, ts)
                if probation.held and clock.current(ts, at):
                    self._settle(probation.vote(ts, rec.client_id or rec.session_id,
                                                clock.reach(), clock.event_reach()))
                moved = (self.arrival_clock.judge(kind, ts, arrived)
                         if arrived is not None and judge else None)
                if moved:  # off by its own arrival, now that the arrival clock can tell
                    self._retime(ts, moved, kind, raw, rec, acc.ARRIVAL_CLOCK)
                elif moved is None:
                    # (too few samples to judge by: a record from the future is judged still)
                    self._admit(ts, kind, raw, rec, at, judge or self._from_the_future(ts))
                else:
                    self._buffer(ts, kind, rec, raw, True)
        finally:
            clock.watermark = watermark

    def _learn_exposure_gaps(self, held: list) -> None:
        """The warm-up's exposures against their searches (one per search): the typical gap
        the warm-up's events are judged by (collector/clock/exposure_gaps.py)."""
        gaps = self.exposure_gaps
        searches = {rec.query_id: ts for ts, kind, _, rec, _, _ in held if kind == _QUERY}
        for ts, kind, _, rec, _, _ in held:
            key = rec.query_id
            if (kind == _EVENT and key in searches and ACTIONS.get(rec.action_name) == EXPOSURE
                    and key != gaps.last):
                gaps.sample(key, ts - searches.pop(key))

    def _realigned(self, held: list) -> list:
        """The warm-up's records with those of applications found off moved by their
        offsets, and the clock sampled again from them as they arrived (each with its clock
        at arrival): no application's clock is the stream's."""
        clock = self.clock
        clock.restart()
        realigned = []
        for ts, kind, raw, rec, _, arrived in held:
            ts = self._aligned(ts, kind, rec)
            at = clock.at_arrival()
            realigned.append((ts, kind, raw, rec, at, arrived))
            if kind == _QUERY and at is not None and clock.fits(ts, at):
                clock.note_query(ts)
            if not int(ts * 1000.0) & SAMPLE_MASK:
                clock.sample(ts, rec.client_id or rec.session_id)
        clock.read()
        return realigned

    # -- time ------------------------------------------------------------------------------
    def advance(self, now: float) -> None:
        """Let stream time pass without records (an idle source): the records held for a
        clock or for votes are decided, then what is due."""
        self._decide_held()
        self.clock.advance(now)
        self._release()

    def _decide_held(self) -> None:
        """What waits for the clock's warm-up or for votes is decided on what there is."""
        if self.warmup is not None:
            self._end_warmup(judge=self.clock.provisional)
        self._settle(self.probation.drain(self.clock.reference().edge + UNVOUCHED_S))

    def idle(self, quiet_s: float) -> bool:
        """No record has arrived for ``quiet_s`` seconds of stream time (the source's clock:
        the wall clock live, the demo's scaled one). Past ``ordering.idle_s`` every buffered
        record is released and stream time follows the source's from where the stream was, so
        the last searches before a lull get their outcomes (Flink's ``withIdleness``). A
        record on probation — ahead of the stream, no other client's record has said the
        stream is there — goes on waiting: for the votes of the records after the lull, or for
        stream time to reach it (then it stands). A record that arrives after that is late
        only when it was delayed by more than ``idle_s`` (live, where stamps follow the wall
        clock). True when it did."""
        if quiet_s < self.idle_s:
            return False
        if self.idle_from is None:  # where the stream was when it went quiet
            if self.warmup is not None:
                self._end_warmup(judge=self.clock.provisional)
            self.idle_from = self._position()
        if self.idle_from == -inf:
            return False
        clock = self.clock
        clock.advance(self.idle_from + clock.lateness + 1.0 / TICKS + quiet_s - self.idle_s)
        self._settle(self.probation.ready(clock.now))  # those stream time has reached
        self._release()
        return True

    def _position(self) -> float:
        """Where the stream was when its last record arrived: the newest time of a record that
        fitted it — not one that stood further ahead (a skewed client within ``max_ahead``: it
        waits in the buffer until the stream reaches it) — and never past what the arrival
        clock says while it is steady."""
        lead = self.arrival_clock.lead()
        if lead is None or self.last_arrival == -inf:
            return self.settled
        return min(self.settled, self.last_arrival + lead)

    @property
    def newest(self) -> float:
        """The newest (corrected) time of any record buffered."""
        return max(self.settled, self.ahead)

    def close(self) -> None:
        """End of input: apply every buffered record and decide every pending outcome."""
        self.advance(inf)
        self.closed = True

    @property
    def query_stats(self) -> QueryStats | None:
        """The per-query aggregates this engine feeds (with a store), else None."""
        return self.sessions.query_stats

    @property
    def lateness(self) -> float:
        return self.clock.lateness

    @property
    def waiting(self) -> int:
        """Records fed and not yet applied: buffered in event-time order, held for the clock's
        warm-up or on probation."""
        return (sum(map(len, self.buckets.values())) + len(self.warmup or ())
                + len(self.probation.held))

    def buffered_until(self) -> float:
        """The newest event time a record fed so far can still take: +inf while the clock
        warms up (those records are not judged yet)."""
        return inf if self.warmup else max(self.newest, self.probation.newest())

    def final_before(self) -> float:
        """Records older than this (event time) can no longer change any count: every window
        they could fall into has closed."""
        return self.clock.watermark - self.sessions.attribution_s - self.clock.lateness

    def reset_counts(self) -> None:
        """Forget what was counted, keep every open session: after a replay that rebuilt state
        from records already counted elsewhere (see docs/delivery.md)."""
        for series in self.table.series:
            reset_series(series)
        for experiment in self.table.experiments:
            reset_experiment(experiment)
        self.stats.reset()
        self.table.application.folded = self.table.variant.folded = 0
        self.table.experiments_refused = 0

    def view(self, release: bool = True) -> View:
        """The live counts and state gauges, for exposition (no copy). ``release``: apply the
        privacy rules to the top queries here (not for a view that is merged with others and
        released once there)."""
        clock, sessions = self.clock, self.sessions
        now = max(clock.now, 0.0) if clock.now < inf else max(self.newest, 0.0)
        return View(
            series=list(self.table.series),
            experiments=list(self.table.experiments),
            stats=self.stats,
            folded={**{c.name: c.folded for c in (self.table.application, self.table.variant)},
                    "experiment": self.table.experiments_refused},
            gauges={
                "last_event_timestamp_seconds": max(self.newest, 0.0),
                "watermark_timestamp_seconds": now if self.closed
                else max(clock.watermark, 0.0),
                "open_sessions": len(sessions.sessions),
                "pending_searches": sessions.pending,
                "tracked_searches": len(sessions.searches),
                "buffered_records": self.waiting,
            },
            top_candidates=(candidates := sessions.zero_result_queries.candidates(now)),
            released=self.release.release(candidates) if release else Released({}, {}),
        )

    # -- application -----------------------------------------------------------------------
    def _release(self) -> None:
        """Apply, in order, every buffered record older than the watermark: whole buckets
        (the watermark is a bucket boundary), each sorted once."""
        order, buckets = self.order, self.buckets
        limit = self.clock.watermark * TICKS  # bucket n is complete when n < limit
        sessions = self.sessions
        pending = self.pending
        on_query, on_event = sessions.on_query, sessions.on_event
        records = self.stats.records
        if self.judgments is not None:
            sessions.judged = self.judgments.current()  # a reloaded set from the next bucket
        if self.examination is not None:
            sessions.click_weights = self.examination.current().weights
        while order and order[0] < limit:
            number = heappop(order)
            if number > sessions.next_deadline * TICKS:  # deadlines before this bucket
                sessions.expire_before(number / TICKS)
            batch = buckets.pop(number)
            batch.sort()
            for ts, kind, key, raw, _, rec in batch:  # may grow behind the current entry
                try:
                    if kind == _QUERY:
                        pending.pop(key, None)
                        outcome = on_query(rec, ts)
                    else:
                        outcome = on_event(rec, ts)
                        if outcome == acc.ORPHAN:
                            found = pending.get(key)
                            # stamped before its search, still buffered; once moved to the
                            # search's time and still an orphan, the search is not coming
                            # (its entry was never buffered): dead-lettered, not moved again
                            if found is not None and found[0] != ts:
                                self.stats.retimed[acc.BEFORE_SEARCH] += 1
                                search = found[0]
                                entry = (search, kind, key, raw, next(self.arrival), rec)
                                if int(search * TICKS) == number:
                                    insort(batch, entry)  # after the current one: later
                                else:
                                    self._push(entry)
                                continue
                            self._orphan(rec, raw, key)
                except Exception as error:  # one record's failure is that record's
                    self._unexpected(kind, raw, error)
                    continue
                records[kind][outcome] += 1
        watermark = self.clock.watermark
        if watermark > sessions.next_deadline:
            sessions.expire_before(watermark)

    def _apply_late(self, kind: int, rec: WireRecord, ts: float, raw: bytes) -> None:
        """A late event is applied only while its search is still attributable; a late query
        is a duplicate when its search is known, else it is lost (and kept as a dead letter)."""
        self._release()  # its search may still be waiting in the buffer
        stats = self.stats
        try:
            if kind == _EVENT:
                outcome = self.sessions.on_event(rec, ts)
            elif rec.query_id in self.sessions.searches or rec.query_id in self.pending:
                outcome = acc.DUPLICATE
            else:
                outcome = acc.ORPHAN
        except Exception as error:
            self._unexpected(kind, raw, error)
            return
        if outcome == acc.DUPLICATE:
            stats.records[kind][acc.DUPLICATE] += 1
            return
        stats.records[kind][acc.LATE] += 1
        if outcome == acc.ORPHAN:
            stats.data_quality[acc.LATE_NOT_APPLIED] += 1
            if kind == _EVENT:  # late or not, its search is not tracked: tracking health
                stats.events_without_search[self.table.application.resolve(rec.application)] += 1
            self._dead_letter(raw, LATE,
                              f"{self.clock.watermark - ts:.3f}s behind the watermark")

    def reject(self, raw: bytes, reason: str, detail: str) -> None:
        """A record its source refused before decoding (e.g. oversized): counted and kept."""
        self.stats.records[acc.UNKNOWN][acc.INVALID] += 1
        self.stats.invalid[reason] += 1
        self._dead_letter(raw, reason, detail)

    def _unexpected(self, kind: int, raw: bytes, error: Exception) -> None:
        """A record that broke the code, not a rule: counted, kept, and the stream goes on."""
        reason = acc.unexpected_reason(error)
        self.stats.records[kind][acc.INVALID] += 1
        self.stats.invalid[reason] += 1
        self._dead_letter(raw, reason, f"{type(error).__name__}: {error}"[:500])

    def _orphan(self, rec: WireRecord, raw: bytes, key: str) -> None:
        """An event whose search was never seen (or is gone): kept, and counted per
        application (tracking health: a front end whose query records are lost)."""
        application = self.table.application.resolve(rec.application)
        self.stats.events_without_search[application] += 1
        self._dead_letter(raw, ORPHAN, f"no tracked search {key!r}")

    def _dead_letter(self, raw: bytes, reason: str, detail: str) -> None:
        self.stats.dead_lettered[reason] += 1
        self.dead_letters.write(raw, reason, detail)
