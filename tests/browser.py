"""A real browser for the tests of the pages people open (feedback.html, summary.html): Debian's
Chromium, headless, driven through its chromedriver with Selenium. A page is judged as a reader
meets it: what it logs to the console, what a click folds open, what it shows. Each test keeps a
screenshot of what it saw under build/screenshots/, for a person to look at after the run.

Without Chromium the page tests fail, saying how to install it (`make test` installs it as root):
a skipped browser test would let a broken page pass.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from graders.course_facts.kit import ROOT

SCREENSHOTS = ROOT / "build" / "screenshots"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}  # a laptop, and a phone held upright


class Page:
    """One page in the browser: Selenium's driver, with what the tests ask of a page."""

    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver

    def console_errors(self) -> list[str]:
        """Everything the page logged at error level since it was opened (a script's exception,
        a resource that did not load, console.error)."""
        return [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]

    def screenshot(self, name: str) -> Path:
        """The whole page as it is drawn now, kept as build/screenshots/NAME.png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        width = self.driver.get_window_size()["width"]
        self.driver.set_window_size(width, min(max(height, 600), 12000))
        self.driver.save_screenshot(str(path))
        return path


def chromium() -> webdriver.Chrome:
    driver, browser = shutil.which("chromedriver"), shutil.which("chromium")
    if driver is None or browser is None:
        pytest.fail(
            "the page tests need Chromium and its driver: sudo apt-get install chromium chromium-driver "
            "(or python3 -m course.machine browser, as root)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    # --no-sandbox: Chromium's own sandbox refuses to start as root (CI runs as root); the pages
    # opened are the kit's own output, read from local files.
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    browser = chromium()
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture
def open_page(driver: webdriver.Chrome):
    """`open_page(path, width="desktop")`: the file opened in the browser, as a `Page`."""

    def opened(path: Path, width: str = "desktop") -> Page:
        driver.set_window_size(*WIDTHS[width])
        driver.get_log("browser")  # drained: what earlier pages logged is theirs
        driver.get(path.resolve().as_uri())
        return Page(driver)

    return opened
