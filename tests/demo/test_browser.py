"""The demo page and a static page in a real headless browser (Chromium through selenium):
type a pair, submit, see both trees and the probabilities. Fails, not skips, without a browser
(CI must run it); SPINN_ALLOW_NO_BROWSER=1 turns that into a skip on a machine without one."""

import os
import threading

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from spinn_allennlp.demo.server import build_server
from spinn_allennlp.demo.static import write_page
from spinn_allennlp.testing import FIXTURES_ROOT
from tools.testing.browser import (
    ALLOW_NO_BROWSER,
    headless_chromium,
    missing_browser_message,
)

ARCHIVES = FIXTURES_ROOT / "pair_classification" / "archives"


@pytest.fixture(scope="module")
def browser():
    problem = missing_browser_message()
    if problem:
        if os.environ.get(ALLOW_NO_BROWSER) == "1":
            pytest.skip(problem)
        pytest.fail(problem)
    driver = headless_chromium()
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server():
    server = build_server([str(ARCHIVES / "spinn_v0.1.0.tar.gz"), "--port", "0"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def leaves(figure):
    return [leaf.text for leaf in figure.find_elements(By.CSS_SELECTOR, "svg text.leaf")]


def test_type_a_pair_submit_and_see_both_trees(browser, server):
    browser.get(server.url)
    browser.find_element(By.ID, "premise").send_keys("Two dogs run in a park.")
    browser.find_element(By.ID, "hypothesis").send_keys("Animals <b>move</b>.")
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "#hypothesis-tree svg"))
    )
    premise = browser.find_element(By.ID, "premise-tree")
    hypothesis = browser.find_element(By.ID, "hypothesis-tree")
    assert leaves(premise) == "Two dogs run in a park .".split()
    assert len(premise.find_elements(By.CSS_SELECTOR, "circle.inner")) == 7 - 1
    # The typed markup is shown as words, not made into elements.
    assert leaves(hypothesis)[:2] == ["Animals", "<"] and "move</b" in leaves(hypothesis)
    assert browser.find_elements(By.CSS_SELECTOR, "#result b:not(figcaption b):not(p b)") == []
    assert "model's own parser" in premise.find_element(By.TAG_NAME, "figcaption").text
    rows = browser.find_elements(By.CSS_SELECTOR, "table.probs tr")
    assert {row.find_element(By.TAG_NAME, "th").text for row in rows} == {
        "entailment",
        "neutral",
        "contradiction",
    }
    probs = [float(row.find_element(By.CSS_SELECTOR, "td.prob").text) for row in rows]
    assert sum(probs) == pytest.approx(1.0, abs=2e-3)
    # The form keeps the pair; an empty premise now is an error on the page, not a crash.
    assert (
        browser.find_element(By.ID, "premise").get_attribute("value") == "Two dogs run in a park."
    )
    browser.find_element(By.ID, "premise").clear()
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "#result .error"))
    )
    assert "premise is empty" in browser.find_element(By.CSS_SELECTOR, "#result .error").text
    assert browser.find_elements(By.CSS_SELECTOR, "#result svg") == []


def test_static_page_of_a_predictions_file(browser, tmp_path):
    predictions = ARCHIVES / "spinn_v0.1.0.raw_pairs.predictions.jsonl"
    with_error = tmp_path / "predictions.jsonl"
    with_error.write_text(predictions.read_text() + '{"error": "the premise is empty"}\n')
    page = tmp_path / "page.html"
    count = write_page(with_error, page)
    browser.get(page.as_uri())
    sections = browser.find_elements(By.CSS_SELECTOR, "section.prediction")
    assert len(sections) == count == len(predictions.read_text().splitlines()) + 1
    for section in sections[:-1]:
        figures = section.find_elements(By.CSS_SELECTOR, "figure.tree-figure")
        assert len(figures) == 2 and all(leaves(figure) for figure in figures)
    assert "the premise is empty" in sections[-1].find_element(By.CLASS_NAME, "error").text
