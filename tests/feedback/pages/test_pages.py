"""Every HTML page searchpulse writes, opened in a real headless Chromium (tests/browser.py):
no console error, every chart drawn, every table non-empty; the evaluate page sorts and filters;
the report opens with sentences, not Python reprs. With SEARCHPULSE_SCREENSHOTS=DIR the pages'
screenshots are written there (docs/screenshots/ holds the committed ones)."""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from collector.sources.simulator import SimulationSpec
from searchpulse import EXIT_OK, EXIT_REGRESSION, main
from tests.browser import Browser, chromium
from tests.feedback.candidates.test_job import simulated_store
from tests.feedback.evaluate.test_scoring import _doc, _strata, _write_case
from tests.feedback.judging.test_agreement import _panel

pytestmark = pytest.mark.integration  # a real browser

HOSTILE = 'x <img src=y onerror=alert(1)> "q" &amp; <b>'


@pytest.fixture(scope="module")
def browser():
    with chromium() as instance:
        yield instance


def _quiet(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return main(list(argv))


def _screenshot(browser: Browser, name: str) -> None:
    directory = os.environ.get("SEARCHPULSE_SCREENSHOTS")
    if directory:
        browser.screenshot(Path(directory) / f"{name}.png")


@pytest.fixture(scope="module")
def evaluate_page(tmp_path_factory) -> Path:
    """B leaves head queries mostly alone (a third reshuffled) and buries the best document of
    every known-item query."""
    directory = tmp_path_factory.mktemp("evaluate")
    rng = random.Random(5)
    lists = {f"head query {i}": [rng.randint(0, 3) for _ in range(12)] for i in range(59)}
    lists[HOSTILE] = [rng.randint(0, 3) for _ in range(12)]  # n = 60: reshuffled in B
    lists.update({f"sku {100000 + i}": [3] + [rng.randint(0, 1) for _ in range(11)]
                  for i in range(20)})
    judgments, topics, run_a = _write_case(directory, lists)
    strata = _strata(directory, {q: "head" for q in lists if not q.startswith("sku")})
    lines = []
    for n, query in enumerate(lists, start=1):
        ranked = [_doc(query, r) for r in range(1, 13)]
        if query.startswith("sku"):
            ranked = ranked[1:] + ranked[:1]
        elif n % 3 == 0:
            rng.shuffle(ranked)
        lines += [f"t{n} Q0 {d} {r} {1 / r} b\n" for r, d in enumerate(ranked, start=1)]
    (directory / "candidate.run").write_text("".join(lines))
    baseline = directory / "baseline.run"
    Path(run_a).rename(baseline)
    html = directory / "evaluate.html"
    assert _quiet("evaluate", "--judgments", judgments, "--topics", topics, "--strata",
                  str(strata), "--set", "strata.known_item_patterns=sku \\d+", "--k", "5",
                  "--run", str(baseline), "--run", str(directory / "candidate.run"),
                  "--gate", "nDCG@5", "--gate", "R@10 margin=0.02 slices=all",
                  # the page lists --top each way: every changed ranking here (the hostile one)
                  "--top", "100", "--html", str(html)) == EXIT_REGRESSION
    return html


def test_a_broken_page_is_caught(browser, tmp_path):
    """The checks can fail: a script error, a chart of zero size, an empty table."""
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><html><head><link rel="icon" href="data:,"></head><body>'
                    '<svg width="0" height="0"><title>nothing</title></svg>'
                    "<table><thead><tr><th>x</th></tr></thead><tbody></tbody></table>"
                    "<script>undefinedFunction();</script></body></html>")
    problems = browser.open_page(page).problems()
    assert len(problems) == 3, problems
    assert "undefinedFunction" in problems[0]


def test_the_evaluate_page(browser, evaluate_page):
    page = browser.open_page(evaluate_page)
    assert page.problems() == []
    titles = [c["title"] for c in page.charts]
    assert titles == ["nDCG@5: Δ and 95 % interval per slice",
                      "R@10: Δ and 95 % interval per slice", "nDCG@5 per stratum"]
    assert len(page.tables) == 5  # gate, the queries, every measure, each run's summary
    _screenshot(browser, "evaluate")
    driver = browser.driver
    # the bars are labelled as the scores they are, not as percentages
    labels = [t.text for t in driver.find_elements(By.TAG_NAME, "svg")[2].find_elements(
        By.TAG_NAME, "text")]
    numbers = [label for label in labels if label[:1].isdigit()]
    assert len(numbers) == 6 and all(re.fullmatch(r"[01]\.\d{3}", n) for n in numbers)
    rows = driver.find_elements(By.CSS_SELECTOR, "#queries tbody tr")
    strata = {r.get_attribute("data-stratum") for r in rows}
    assert strata == {"head", "known_item"}
    # a query's text is text: shown as typed, never markup
    assert driver.find_elements(By.CSS_SELECTOR, "img, b") == []
    assert HOSTILE in [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows]
    # sort by the first measure's Δ: ascending, then descending
    header = next(h for h in driver.find_elements(By.CSS_SELECTOR, "#queries th")
                  if h.text.startswith("nDCG@5 Δ"))
    column = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "#queries th")].index(
        header.text)

    def deltas() -> list[float]:
        return [float(r.find_elements(By.TAG_NAME, "td")[column].get_attribute("data-v"))
                for r in driver.find_elements(By.CSS_SELECTOR, "#queries tbody tr")]

    header.click()
    assert deltas() == sorted(deltas())
    header.click()
    assert deltas() == sorted(deltas(), reverse=True)
    Select(driver.find_element(By.CSS_SELECTOR, "select.stratum-filter")).select_by_value(
        "known_item")
    shown = [r for r in driver.find_elements(By.CSS_SELECTOR, "#queries tbody tr")
             if r.is_displayed()]
    assert len(shown) == 20 and all(r.get_attribute("data-stratum") == "known_item"
                                    for r in shown)
    # p-values: below 0.001 said so, never 0.000
    every = driver.find_element(By.ID, "measures")
    titles = [h.text for h in every.find_elements(By.TAG_NAME, "th")]
    p_column = next(i for i, t in enumerate(titles) if t.startswith("p (randomization)"))
    shown_p = [r.find_elements(By.TAG_NAME, "td")[p_column].text
               for r in every.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert "< 0.001" in shown_p and "0.000" not in shown_p


def test_a_single_run_evaluate_page(browser, tmp_path):
    judgments, topics, run = _write_case(tmp_path, {"q": [2, 3, 0, 1, 0], "r": [0, 1]})
    html = tmp_path / "single.html"
    assert _quiet("evaluate", "--judgments", judgments, "--topics", topics, "--run", run,
                  "--html", str(html)) == EXIT_OK
    page = browser.open_page(html)
    assert page.problems() == [] and len(page.charts) == 1 and len(page.tables) == 1


def test_the_agreement_page(browser, tmp_path):
    judgments = tmp_path / "judgments.csv"
    _panel(80).to_csv(judgments, index=False)
    strata = tmp_path / "strata.csv"
    strata.write_text("query,stratum\n" + "".join(f"q{i},head\n" for i in range(10)))
    html, disputed = tmp_path / "agreement.html", tmp_path / "disputed.csv"
    assert _quiet("judgments", "agreement", str(judgments), "--strata", str(strata),
                  "--automatic", "llm", "--html", str(html), "--disputed",
                  str(disputed)) == EXIT_OK
    page = browser.open_page(html)
    assert page.problems() == []
    assert [c["title"] for c in page.charts] == [
        "Krippendorff α (ordinal) per pair of raters", "ann (rows) × ben (columns)",
        "humans' final grade (rows) × llm (columns)",
        "llm: mean grade minus the humans, per human grade",
        "llm: mean grade minus the humans, per stratum"]
    text = browser.driver.find_element(By.TAG_NAME, "body").text
    assert "α ≥ 0.800 reliable" in text and "Most disputed pairs" in text
    assert disputed.read_text().count("\n") > 5
    _screenshot(browser, "agreement")


def test_the_experiments_page(browser, tmp_path):
    """Returning users, a treatment with a known click effect and an interleaved arm: per
    application a picture of every difference with its interval, the tables filled."""
    log, html = tmp_path / "ubi.jsonl", tmp_path / "experiments.html"
    assert main(["simulate", "--sessions", "3000", "--users", "1000", "--interleaving", "0.1",
                 "--treatment-click-effect", "0.08", "--out", str(log)]) == EXIT_OK
    assert _quiet("experiments", str(log), "--html", str(html), "--no-progress") == EXIT_OK
    page = browser.open_page(html)
    assert page.problems() == []
    assert [c["title"] for c in page.charts] == ["mobile: differences from the control",
                                                 "web: differences from the control"]
    # per application: variants, rates; the interleaved arm's teams
    assert len(page.tables) == 6
    body = browser.driver.find_element(By.TAG_NAME, "body").text
    assert "searches without client_id" in body and "CTR" in body
    rows = browser.driver.find_elements(By.CSS_SELECTOR, "svg circle")
    assert len(rows) == 2 * 6 * 2  # applications × rates × variants other than the control
    _screenshot(browser, "experiments")


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    """The feedback job on simulated traffic with personal-data searches (withheld) and a
    judgment set of two raters (the agreement section)."""
    directory = tmp_path_factory.mktemp("report")
    simulator, _, store = simulated_store(directory, SimulationSpec(seed=3, sessions=6000))
    lines = simulator.judgments_csv().splitlines()
    rng = random.Random(2)
    second = [lines[0]]
    for line in lines[1:400]:
        fields = line.rsplit(",", 2)
        grade = min(3, max(0, int(fields[2]) + rng.choice([0, 0, 0, 1, -1])))
        second.append(f"{fields[0]},ben,{grade}")
    judgments = directory / "judgments.csv"
    judgments.write_text("\n".join(lines[:400] + second[1:]) + "\n")
    out = directory / "refresh"
    assert _quiet("feedback", "--store", store, "--since", "2026-01-01", "--out", str(out),
                  "--judgments", str(judgments), "--no-progress") == EXIT_OK
    return out / "report.html"


def test_the_feedback_report(browser, report_page):
    page = browser.open_page(report_page)
    assert page.problems() == []
    assert len(page.charts) >= 4  # failure rates, selection, agreement heat map, confusion
    body = browser.driver.find_element(By.TAG_NAME, "body").text
    opening = browser.driver.find_element(By.CSS_SELECTOR, ".narrative").text
    assert re.match(r"From 2026-01-\d\d to 2026-0\d-\d\d, [\d,]+ searches\. [\d,]+ queries were "
                    r"read", opening)
    assert re.search(r"[\d,]+ quer(y|ies) go to the judges: head \d+ \(\d+ failing", opening)
    assert "Withheld from every file and from this page:" in opening
    assert re.search(r"4 queries holding personal data \(1 card number, 1 email, 1 long "
                     r"number, 1 phone number\) — nothing: they never leave", opening)
    assert re.search(r"\d+ quer(y|ies) typed by fewer distinct clients than "
                     r"feedback\.min_distinct_clients", opening)
    # no Python repr anywhere: no dict or list literal, no quoted key
    assert not re.search(r"\{'|': |\['|\[\d+, \d+", body), body[:2000]
    _screenshot(browser, "report")
