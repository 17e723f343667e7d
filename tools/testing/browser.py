"""A real headless browser for the demo's tests and screenshot script: Debian's `chromium`
with `chromium-driver` (installed by `make setup` when missing and run as root), driven by
selenium. Imported explicitly (needs selenium, a dev dependency)."""

import os
import shutil
from typing import Optional, Tuple

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)
# Set to 1 to let the browser tests skip where no browser is installed; unset (CI), they fail.
ALLOW_NO_BROWSER = "SPINN_ALLOW_NO_BROWSER"


def find_browser() -> Tuple[Optional[str], Optional[str]]:
    """Paths of the browser and its driver (None where missing)."""
    browser = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    driver = next((path for name in DRIVERS if (path := shutil.which(name))), None)
    return browser, driver


def missing_browser_message() -> Optional[str]:
    """None when a browser and its driver are installed, else what to do."""
    browser, driver = find_browser()
    if browser and driver:
        return None
    return (
        f"no headless browser (chromium: {browser}, chromedriver: {driver}): "
        "`apt-get install chromium chromium-driver` (make setup does it as root); "
        f"{ALLOW_NO_BROWSER}=1 skips these tests instead of failing"
    )


def headless_chromium(width: int = 1100, height: int = 900) -> webdriver.Chrome:
    """A headless Chromium of the given window size; the caller quits it."""
    browser, driver = find_browser()
    if not (browser and driver):
        raise RuntimeError(missing_browser_message())
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in a container has no user namespace for the sandbox
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    # Selenium Manager would otherwise look online for a driver.
    os.environ.setdefault("SE_OFFLINE", "true")
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))
