#!/usr/bin/python3
"""Opens a troupe node's dashboard in headless Chromium and checks it.

Usage: dashboard_check.py URL --members N --screenshot PATH [--timeout S]

Drives Debian's chromium through chromium-driver (Selenium): loads the page,
waits until it shows N members with status "up", a singleton host and a
lease holder that are addresses of those members, then saves a screenshot.
Exit 0 when all of that is seen; 1 with the reason (and the screenshot of
what was shown) when the timeout passes first; 2 when the browser cannot
start (the message names what is missing).
"""

import argparse
import sys
import time

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
except ImportError as e:  # pragma: no cover - reported, not hidden
    print(f"dashboard_check: python3-selenium is missing ({e})", file=sys.stderr)
    sys.exit(2)


def start_browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--window-size=1400,1000",
                "--no-first-run", "--disable-extensions"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                            options=opts)


# Read in one script run: the page re-renders its tables every second, so
# element handles kept across calls go stale.
OBSERVE = """
const text = (id) => document.getElementById(id).textContent;
const members = {};
for (const r of document.querySelectorAll('#members tr[data-member]'))
  members[r.dataset.member] = r.dataset.status;
return [members, text('singleton-host'), text('lease-holder'),
        text('leader'), text('oldest')];
"""


def observe(driver):
    """What the page shows now."""
    members, host, holder, leader, oldest = driver.execute_script(OBSERVE)
    return members, host, holder, leader, oldest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--members", type=int, required=True)
    ap.add_argument("--screenshot", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    try:
        driver = start_browser()
    except WebDriverException as e:
        print(f"dashboard_check: cannot start chromium/chromedriver: {e.msg}",
              file=sys.stderr)
        return 2
    try:
        driver.get(a.url)
        deadline = time.monotonic() + a.timeout
        why = "nothing observed"
        while True:
            members, host, holder, leader, oldest = observe(driver)
            up = sorted(m for m, s in members.items() if s == "up")
            # The host and holder lines name a member address followed by
            # what runs there: "127.0.0.1:2551#42 (scheduler)".
            host_addr = host.split(" ")[0]
            holder_ok = any(holder.startswith(m) or m in holder for m in up) \
                or ("token" in holder and holder != "none held")
            if len(up) != a.members:
                why = f"{len(up)} up members shown, want {a.members}: {members}"
            elif host_addr not in up:
                why = f"singleton host {host!r} is not an up member {up}"
            elif not holder_ok:
                why = f"lease holder {holder!r} not shown"
            else:
                driver.save_screenshot(a.screenshot)
                print(f"dashboard_check: {len(up)} up members, leader {leader},"
                      f" oldest {oldest}, singleton host {host},"
                      f" lease holder {holder}; screenshot {a.screenshot}")
                return 0
            if time.monotonic() > deadline:
                driver.save_screenshot(a.screenshot)
                print(f"dashboard_check: FAIL after {a.timeout:.0f}s: {why};"
                      f" screenshot {a.screenshot}", file=sys.stderr)
                return 1
            time.sleep(0.5)
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
