"""A screenshot of the demo page (docs/demo.png): serves an archive, types a pair into the page
in a headless Chromium, submits and saves the page as PNG.

    python scripts/demo_screenshot.py out/spinn/model.tar.gz --tree-source benepar \
        --out docs/demo.png
"""

import argparse
import sys
import threading
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from spinn_allennlp.demo.server import build_server

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.testing.browser import headless_chromium  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--tree-source", default=None)
    parser.add_argument("--premise", default="A man in a blue shirt is playing a guitar on stage.")
    parser.add_argument("--hypothesis", default="A person is making music.")
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--max-height", type=int, default=1300)
    parser.add_argument("--out", default="docs/demo.png")
    args = parser.parse_args()
    argv = [args.archive, "--port", "0"]
    if args.tree_source:
        argv += ["--tree-source", args.tree_source]
    server = build_server(argv)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = headless_chromium(args.width, 800)
    try:
        browser.get(server.url)
        browser.find_element(By.ID, "premise").send_keys(args.premise)
        browser.find_element(By.ID, "hypothesis").send_keys(args.hypothesis)
        browser.find_element(By.ID, "submit").click()
        WebDriverWait(browser, 120).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "#result section"))
        )
        height = browser.execute_script("return document.documentElement.scrollHeight")
        # The whole page in one shot (a window resize does not grow a headless viewport).
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": args.width,
                "height": min(int(height) + 10, args.max_height),
                "deviceScaleFactor": 1,
                "mobile": False,
            },
        )
        browser.save_screenshot(args.out)
        print(f"wrote {args.out}")
    finally:
        browser.quit()
        server.shutdown()


if __name__ == "__main__":
    main()
