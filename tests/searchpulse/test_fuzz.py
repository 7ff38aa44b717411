"""A generated fuzz of the command line: every subcommand × every file it reads fed a bad file
(binary, empty, not UTF-8, UTF-16, a fake .gz, a gzipped binary, a directory, missing), every
number it takes fed negative, zero, huge and non-numeric values, every output it writes
pointed where nothing can be written (or where every write fails: /dev/full). No invocation
may raise (a traceback fails the test: ``main`` runs in-process) and each exits as the README
says — 2 for a usage or configuration error, 3 for an input that cannot be used — with an
error line that names the file, the flag or the setting.

The matrix is deterministic (tests/searchpulse/test_fuzz.py ``CASES``, over 450 invocations);
``make check`` runs every ``SAMPLE``-th case, ``make test`` all of them (slow).
"""

from __future__ import annotations

import gzip
import logging
from dataclasses import dataclass

import pytest

from searchpulse import main
from testbed.process import free_port

SAMPLE = 8  # every SAMPLE-th case runs without the slow marker
HUGE = "9" * 30

# (what the bad file is, how it is made in the fixture)
BAD_FILES = ("binary", "empty", "latin1", "fake_gz", "directory", "missing", "utf16",
             "utf16_nobom", "binary_gz")
# kinds only a log reader is fed: to the others a NUL is text, a .gz name only a name
LOG_ONLY = frozenset({"fake_gz", "utf16_nobom", "binary_gz"})


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    code: int
    named: tuple[str, ...]  # the error line names one of these (placeholders resolved)

    @property
    def id(self) -> str:
        return " ".join(self.argv)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """Valid inputs (a log, its judgment set, strata, topics, a store of it) and the bad
    files, each named by its kind."""
    root = tmp_path_factory.mktemp("fuzz")
    assert main(["simulate", "--sessions", "40", "--out", str(root / "ubi.jsonl"), "--truth",
                 str(root / "truth.json"), "--judgments-out", str(root / "judgments.csv"),
                 "--strata-out", str(root / "strata.csv")]) == 0
    assert main(["simulate", "--sessions", "20", "--seed", "2", "--out",
                 str(root / "other.jsonl"), "--truth", str(root / "truth-2.json")]) == 0
    assert main(["replay", str(root / "ubi.jsonl"), "--store",
                 f"sqlite:///{root / 'q.db'}", "--json"]) == 0
    (root / "topics.tsv").write_text("t1\trunning shoes\n")
    (root / "bad-binary.dat").write_bytes(bytes(range(256)) * 8)
    (root / "bad-empty.dat").write_bytes(b"")
    (root / "bad-latin1.dat").write_bytes("query,stratum\ncafé,head\n".encode("latin-1"))
    (root / "bad-fake_gz.jsonl.gz").write_bytes((root / "ubi.jsonl").read_bytes()[:2000])
    text = (root / "ubi.jsonl").read_text(encoding="utf-8")
    (root / "bad-utf16.dat").write_bytes(text.encode("utf-16"))  # with its byte-order mark
    (root / "bad-utf16_nobom.dat").write_bytes(text.encode("utf-16-le"))
    (root / "bad-binary_gz.jsonl.gz").write_bytes(gzip.compress(bytes(range(256)) * 64))
    (root / "bad-directory").mkdir()
    (root / "out").mkdir()
    return root


def _bad(kind: str) -> str:
    return {"fake_gz": "bad-fake_gz.jsonl.gz", "binary_gz": "bad-binary_gz.jsonl.gz",
            "directory": "bad-directory",
            "missing": "bad-missing.dat"}.get(kind, f"bad-{kind}.dat")


# -- bad files ------------------------------------------------------------------------------
COLLECT = ("collect", "--bootstrap-servers", "BROKER", "--metrics-port", "0", "--set",
           "kafka.connect_timeout_s=0.5")
DEMO = ("demo", "--duration", "0.3s", "--port", "0", "--speed", "60")
EVALUATE = ("evaluate", "--judgments", "JUDGMENTS", "--run", "LOG")
FEEDBACK = ("feedback", "--store", "STORE", "--out", "OUT/feedback")
CLICKS = ("clicks", "--store", "STORE", "--out", "OUT/clicks")
SIMULATE = ("simulate", "--sessions", "5", "--out", "OUT/sim.jsonl", "--truth",
            "OUT/truth.json")

# (argv with BAD where the file goes, exit code for a bad file, kinds that are fine as they
# are: an empty settings file sets nothing; a missing warm start is a first run)
FILE_SLOTS: list[tuple[tuple[str, ...], int, frozenset[str]]] = [
    (("replay", "BAD"), 3, frozenset()),
    # one bad input of several: what holds no valid record is a warning naming it (the
    # others are counted); what cannot be opened or ends mid-record (binary) is exit 3
    (("replay", "LOG", "LOG2", "BAD"), 3, frozenset({"empty", "latin1"})),
    (("replay", "LOG", "--config", "BAD"), 2, frozenset({"empty"})),
    (("replay", "LOG", "--strata-file", "BAD"), 2, frozenset()),
    (("replay", "LOG", "--judgments", "BAD"), 2, frozenset()),
    (("replay", "LOG", "--examination", "BAD"), 2, frozenset()),
    (("experiments", "BAD"), 3, frozenset()),
    (("experiments", "--metrics", "BAD"), 3, frozenset()),
    ((*EVALUATE[:2], "BAD", *EVALUATE[3:]), 3, frozenset()),
    ((*EVALUATE[:4], "BAD"), 3, frozenset()),
    ((*EVALUATE, "--topics", "BAD"), 3, frozenset()),
    ((*EVALUATE, "--topic-applications", "BAD"), 3, frozenset()),
    ((*EVALUATE, "--strata", "BAD"), 3, frozenset()),
    (("judgments", "import", "BAD", "--out", "OUT/import"), 3, frozenset()),
    (("judgments", "import", "JUDGMENTS", "--topics", "BAD", "--out", "OUT/import"), 3,
     frozenset()),
    (("judgments", "agreement", "BAD"), 3, frozenset()),
    (("judgments", "agreement", "JUDGMENTS", "--strata", "BAD"), 3, frozenset()),
    ((*FEEDBACK, "--judgments", "BAD"), 3, frozenset()),
    ((*FEEDBACK, "--run", "BAD", "--topics", "TOPICS"), 3, frozenset()),
    ((*FEEDBACK, "--topics", "BAD"), 3, frozenset()),
    ((*FEEDBACK, "--examination", "BAD"), 3, frozenset()),
    (("feedback", "--store", "sqlite:///BAD", "--out", "OUT/feedback"), 3, frozenset()),
    ((*CLICKS, "--warm-start", "BAD"), 3, frozenset({"missing"})),
    (("clicks", "--store", "sqlite:///BAD", "--out", "OUT/clicks"), 3, frozenset()),
    (("config", "check", "--config", "BAD"), 2, frozenset({"empty"})),
    (("generate", "--out", "OUT/deploy", "--config", "BAD"), 2, frozenset({"empty"})),
    ((*SIMULATE, "--config", "BAD"), 2, frozenset({"empty"})),
    ((*COLLECT, "--config", "BAD"), 2, frozenset({"empty"})),
    ((*COLLECT, "--judgments", "BAD"), 2, frozenset()),
    ((*COLLECT, "--web.config.file", "BAD"), 2, frozenset({"empty"})),
    ((*DEMO, "--config", "BAD"), 2, frozenset({"empty"})),
    ((*DEMO, "--judgments", "BAD"), 2, frozenset()),
    ((*DEMO, "--web.config.file", "BAD"), 2, frozenset({"empty"})),
]
# an empty settings file is fine, and so is the rest of these commands' input: they then run
# (collect to no broker: exit 3 after its connect timeout; demo: 0 after its duration)
FINE = {"collect": 3}


def _file_cases() -> list[Case]:
    cases = []
    for argv, code, fine in FILE_SLOTS:
        for kind in BAD_FILES:
            if kind in LOG_ONLY and (argv[0] not in ("replay", "experiments", "evaluate")
                                     or "--metrics" in argv):
                continue
            bad = _bad(kind)
            filled = tuple(a.replace("BAD", bad) for a in argv)
            expected = FINE.get(argv[0], 0) if kind in fine else code
            warned = argv[0] == "replay" and "LOG2" in argv  # named in a warning
            cases.append(Case(filled, expected, (bad,) if kind not in fine or warned else ()))
    return cases


# -- bad values -----------------------------------------------------------------------------
VALUES = ("-1", "0", HUGE, "abc", "nan", "", "1e999")
# which VALUES a kind of number takes (the others must be refused, exit 2)
TAKES = {
    "positive_int": {HUGE},
    "count": {"0", HUGE},
    "users": {"0"},
    "timeout": {"0", HUGE},
    "seed": {"-1", "0", HUGE},
    "positive": {HUGE},
    "share": {"0"},
    "spread": {"0"},
    "preference": {"0"},
    "click_effect": {"0"},
    "port": {"0"},
    "rank": set(),
    "margin": {"0", HUGE},
    "seconds": {HUGE},
}
# (argv before the flag, the flag, its kind, what the error names, VALUES not tried: the huge
# ones that would run for ever — a huge simulation is a valid request)
VALUE_FLAGS: list[tuple[tuple[str, ...], str, str, str, frozenset[str]]] = [
    (SIMULATE[:1] + SIMULATE[3:], "--sessions", "positive_int", "--sessions",
     frozenset({HUGE})),
    (SIMULATE, "--sessions-per-second", "positive", "--sessions-per-second", frozenset()),
    (SIMULATE, "--invalid-rate", "share", "--invalid-rate", frozenset()),
    (SIMULATE, "--interleaving", "preference", "--interleaving", frozenset()),
    (SIMULATE, "--users", "users", "--users", frozenset()),
    (SIMULATE, "--user-activity-sigma", "spread", "--user-activity-sigma", frozenset()),
    (SIMULATE, "--user-click-sigma", "spread", "--user-click-sigma", frozenset()),
    (SIMULATE, "--treatment-click-effect", "click_effect", "--treatment-click-effect",
     frozenset()),
    (SIMULATE, "--seed", "seed", "--seed", frozenset()),
    (("simulate", "--sessions", "5", "--kafka", "BROKER", "--set",
      "kafka.connect_timeout_s=0.5"), "--pace", "positive", "--pace", frozenset({HUGE})),
    (DEMO, "--speed", "positive", "--speed", frozenset()),
    (("demo", "--duration", "0.3s", "--speed", "60"), "--port", "port", "--port|http.port",
     frozenset()),
    (COLLECT[:3], "--metrics-port", "port", "--metrics-port|http.port", frozenset({"0"})),
    (COLLECT, "--idle", "positive", "--idle", frozenset({HUGE})),
    (("replay", "LOG", "--set"), "windows.abandonment_s=", "seconds",
     "windows.abandonment_s", frozenset({HUGE})),
    (("config", "check", "--set"), "kafka.connect_timeout_s=", "timeout",
     "kafka.connect_timeout_s", frozenset()),
    (("config", "check", "--set"), "store.flush_rows=", "positive_int", "store.flush_rows",
     frozenset()),
    (FEEDBACK, "--seed", "count", "--seed", frozenset()),
    (EVALUATE, "--k", "rank", "--k|evaluate.depth", frozenset()),
    (EVALUATE, "--top", "count", "--top", frozenset()),
    (EVALUATE, "--margin", "margin", "--margin|evaluate.margin", frozenset()),
    (("judgments", "agreement", "JUDGMENTS"), "--top", "positive_int", "--top", frozenset()),
]


def _value_cases() -> list[Case]:
    cases = []
    for before, flag, number, named, skipped in VALUE_FLAGS:
        for value in VALUES:
            if value in skipped:
                continue
            taken = value in TAKES[number]
            ok = 3 if before[0] == "collect" or "--kafka" in before else 0
            argv = ((*before, flag + value) if flag.endswith("=") else (*before, flag, value))
            cases.append(Case(argv, ok if taken else 2,
                              () if taken else tuple(named.split("|"))))
    cases += [Case(("feedback", "--store", "STORE", "--out", "OUT/f", "--since", since), 2,
                   ("--since",)) for since in ("-1d", "0", "abc", "2026-02-30", HUGE + "d")]
    cases += [Case(("--log-level", level, "config", "check"), 2, ("--log-level",))
              for level in ("", "LOUD", "-1")]
    return cases


# -- unwritable outputs ---------------------------------------------------------------------
OUTPUTS: list[tuple[tuple[str, ...], str, bool]] = [  # (argv, flag, a directory?)
    (("replay", "LOG"), "--metrics-out", False),
    (("replay", "LOG"), "--dlq", False),
    (SIMULATE[:3], "--out", False),
    (SIMULATE[:3], "--truth", False),
    (SIMULATE[:3], "--strata-out", False),
    (SIMULATE[:3], "--judgments-out", False),
    (FEEDBACK[:3], "--out", True),
    (CLICKS[:3], "--out", True),
    (("judgments", "import", "JUDGMENTS"), "--out", True),
    (("judgments", "agreement", "JUDGMENTS"), "--html", False),
    (("judgments", "agreement", "JUDGMENTS"), "--disputed", False),
    (EVALUATE, "--html", False),
    (("evaluate", "--judgments", "JUDGMENTS", "--run", "LOG", "--run", "LOG2"), "--junit",
     False),
    (("evaluate", "--judgments", "JUDGMENTS", "--run", "LOG", "--run", "LOG2"), "--summary",
     False),
    (("generate",), "--out", True),
    (("generate", "--out", "OUT/deploy"), "--dashboards-out", True),
    (("experiments", "LOG"), "--html", False),
]


def _output_cases() -> list[Case]:
    cases = []
    for argv, flag, directory in OUTPUTS:
        places = ["FILE/under-a-file", "/proc/searchpulse-nowhere/x"]
        if not directory:
            places.append("DIR")  # a directory where a file must go
            # opens, then every write fails: a full disk (unless nothing is written: the
            # log has no invalid record to keep; two logs' runs do not pair, exit 3 before)
            if flag not in ("--dlq", "--junit", "--summary"):
                places.append("/dev/full")
        else:
            places.append("FILE")  # a regular file where a directory must go
        cases += [Case((*argv, flag, place), 2, (flag,)) for place in places]
    return cases


# What issue 35's third held-out fuzz found (run in make check too): an empty broker list was
# no --kafka at all (records on stdout, exit 0) or a bootstrap of '' retried until the connect
# timeout (exit 3); a file that is not an exposition given to experiments --metrics raised.
FOUND_BY_THE_THIRD_FUZZ = [
    Case(("simulate", "--sessions", "10", "--kafka", "", "--topic", "ubi"), 2, ("--kafka",)),
    Case(("simulate", "--sessions", "10", "--kafka", "BROKER,", "--topic", "ubi"), 2,
         ("--kafka",)),
    Case(("collect", "--bootstrap-servers", "", "--topic", "ubi"), 2,
         ("kafka.bootstrap_servers",)),
    Case(("collect", "--bootstrap-servers", "BROKER,,", "--topic", "ubi"), 2,
         ("kafka.bootstrap_servers",)),
    Case(("experiments", "--metrics", "LOG"), 3, ("not a /metrics exposition",)),
    Case(("experiments", "--metrics", "TOPICS"), 3, ("not a /metrics exposition",)),
]
CASES = _file_cases() + _value_cases() + _output_cases() + FOUND_BY_THE_THIRD_FUZZ


def _params() -> list:
    return [pytest.param(case, id=case.id, marks=() if number % SAMPLE == 0
                         or case in FOUND_BY_THE_THIRD_FUZZ else pytest.mark.slow)
            for number, case in enumerate(CASES)]


def test_the_matrix_is_large_enough() -> None:
    assert len(CASES) >= 450, len(CASES)


def _resolved(text: str, work, broker: str) -> str:
    for name, value in (("LOG2", str(work / "other.jsonl")), ("LOG", str(work / "ubi.jsonl")),
                        ("JUDGMENTS", str(work / "judgments.csv")),
                        ("STORE", f"sqlite:///{work / 'q.db'}"),
                        ("TOPICS", str(work / "topics.tsv")), ("BROKER", broker),
                        ("OUT/", f"{work / 'out'}/"), ("FILE", str(work / "truth.json")),
                        ("DIR", str(work / "bad-directory"))):
        if text == name or text.startswith(name + "/") or name.endswith("/"):
            text = text.replace(name, value, 1)
    for kind in BAD_FILES:  # bad files by their names, wherever they stand (sqlite:///…)
        text = text.replace(_bad(kind), str(work / _bad(kind)))
    return text


@pytest.mark.parametrize("case", _params())
def test_a_bad_invocation_exits_as_the_readme_says(case, work, capsys, caplog):
    """No traceback (main runs in-process: an exception fails the test), the README's exit
    code, and the error names the file, the flag or the setting."""
    broker = f"127.0.0.1:{free_port()}"  # nobody listens: collect gives up, exit 3
    argv = [_resolved(a, work, broker) for a in case.argv]
    with caplog.at_level(logging.WARNING):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = exit_.code
    err = capsys.readouterr().err
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
              and not r.name.startswith("kafka")]
    said = "\n".join([*err.splitlines(), *errors])
    assert "Traceback" not in said, said
    assert code == case.code, (code, said[-300:])
    if case.named:
        assert any(name in said for name in case.named), (case.named, said[-2000:])
