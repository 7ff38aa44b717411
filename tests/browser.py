"""A real headless browser for the report pages' tests: Debian's Chromium, driven over WebDriver
by Selenium through Debian's chromedriver (built from the same Chromium source, so the two
always match; nothing is downloaded — no browser build of a library's own, no driver manager).

`open_page` loads a file and reports what a reader would meet: console errors (JavaScript
exceptions, failed loads), charts not drawn (an ``svg`` or its shapes of zero size), empty
tables, tables cut off at the window's edge (wider than the window and in no box that
scrolls). `screenshot` saves the whole page as a palette PNG (small enough to commit).
"""

from __future__ import annotations

import base64
import io
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from testbed.process import require

# What works on this machine (no sandbox as root, no GPU, no network of its own).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")
WIDTH = 1280

# Every svg and its drawn shapes, every table and its body rows, as the page laid them out.
_LAYOUT = """
const size = e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; };
return {
  charts: Array.from(document.querySelectorAll('svg')).map(svg => ({
    title: (svg.querySelector('title') || {}).textContent || '',
    size: size(svg),
    shapes: Array.from(svg.querySelectorAll('rect, circle, line, path, polyline'))
      .filter(s => { const [w, h] = size(s); return w > 0 || h > 0; }).length})),
  tables: Array.from(document.querySelectorAll('table')).map(t => ({
    rows: t.querySelectorAll('tbody tr, tr').length - t.querySelectorAll('thead tr').length,
    visible: size(t)[0] > 0,
    cut: (() => {  // where it is cut off (its right edge), 0 when it fits or its box scrolls
      const right = t.getBoundingClientRect().right, edge = window.innerWidth;
      if (right <= edge) return 0;
      for (let box = t.parentElement; box; box = box.parentElement) {
        const overflow = getComputedStyle(box).overflowX;
        if ((overflow === 'auto' || overflow === 'scroll')
            && box.getBoundingClientRect().right <= edge) return 0;
      }
      return Math.round(right);
    })()})),
  height: document.documentElement.scrollHeight};
"""


@dataclass
class Page:
    """What a loaded page shows, and what is wrong with it."""

    console: list[str] = field(default_factory=list)  # SEVERE entries of the browser's log
    charts: list[dict] = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)
    height: int = 0

    def problems(self) -> list[str]:
        found = [f"console: {line}" for line in self.console]
        found += [f"chart {c['title']!r} not drawn ({c['size']}, {c['shapes']} shapes)"
                  for c in self.charts if min(c["size"]) <= 0 or c["shapes"] == 0]
        found += [f"table {i} is empty" for i, t in enumerate(self.tables) if t["rows"] <= 0]
        found += [f"table {i} is cut off at {t['cut']} px (the window is {WIDTH})"
                  for i, t in enumerate(self.tables) if t["cut"]]
        return found


class Browser:
    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver

    def open_page(self, path: Path) -> Page:
        self.driver.get_log("browser")  # what an earlier page logged is not this one's
        self.driver.get(path.resolve().as_uri())
        layout = self.driver.execute_script(_LAYOUT)
        console = [entry["message"] for entry in self.driver.get_log("browser")
                   if entry["level"] == "SEVERE"]
        return Page(console, layout["charts"], layout["tables"], int(layout["height"]))

    def screenshot(self, path: Path, max_height: int = 2400, colours: int = 64) -> None:
        """The page from its top, at most ``max_height`` pixels, as a palette PNG."""
        height = min(self.driver.execute_script(
            "return document.documentElement.scrollHeight"), max_height)
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}})
        image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
        image.quantize(colours).save(path, optimize=True)


@contextmanager
def chromium() -> Iterator[Browser]:
    """A fresh headless Chromium (its own profile directory) for the duration of the block."""
    binary, driver_path = require("chromium"), require("chromedriver")
    profile = tempfile.mkdtemp(prefix="searchpulse-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield Browser(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
