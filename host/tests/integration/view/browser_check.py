"""What a person sees in `evalhost view`, checked in headless Chromium (Playwright driving
the system's /usr/bin/chromium; never `playwright install`).

    python3 browser_check.py URL MINO_RUN FIRST_RUN SECOND_RUN GREETING

The store (host/tests/integration/view/store.rs): `cases/mino`, then a suite run twice
(`greet` passes, `markup` fails, `flipper` passes then fails). Prints one line per check;
exits non-zero at the first that fails.
"""

import sys

from playwright.sync_api import expect, sync_playwright

url, mino, first, second, greeting = sys.argv[1:6]
url = url.rstrip("/")
problems = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""))
    if not ok:
        problems.append(name)


with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))

    # The runs list: three rows, newest first.
    page.goto(url + "/")
    rows = page.locator("table.runs tbody tr.run")
    expect(rows).to_have_count(3)
    ids = [rows.nth(i).get_attribute("data-run") for i in range(3)]
    check("runs list shows the three runs newest first",
          [i[:8] for i in ids] == [second[:8], first[:8], mino[:8]], str(ids))
    check("the newest run shows its cases and runs passed",
          "1 / 3" in rows.nth(0).inner_text(), rows.nth(0).inner_text())

    # The first suite run: the status filter narrows its cases to the failing one.
    rows.nth(1).locator("a").first.click()
    expect(page.locator("h1")).to_contain_text(first[:8])
    cases = page.locator("table.cases tbody tr.case")
    expect(cases).to_have_count(3)
    check("failures first", cases.nth(0).get_attribute("data-case") == "markup")
    page.select_option("#status", "fail")
    page.click("form.filters button[type=submit]")
    expect(cases).to_have_count(1)
    check("status filter leaves the failing case",
          cases.nth(0).get_attribute("data-case") == "markup",
          cases.nth(0).get_attribute("data-case"))

    # The search box finds a case.
    page.select_option("#status", "all")
    page.fill("#filter-q", "gree")
    page.click("form.filters button[type=submit]")
    expect(cases).to_have_count(1)
    check("search finds greet", cases.nth(0).get_attribute("data-case") == "greet")

    # Clicking the case opens its transcript: the scripted model's reply is visible.
    cases.nth(0).locator("a.case-link").click()
    expect(page.locator("#case-name")).to_contain_text("greet")
    reply = page.get_by_text(greeting).first
    expect(reply).to_be_visible()
    check("the transcript shows the model's reply", reply.is_visible())

    # The hostile case: its markup is text, not elements.
    page.goto(f"{url}/runs/{first}/cases/markup")
    check("hostile markup shown as text",
          page.get_by_text("window.pwned=1").first.is_visible())
    check("hostile markup made no element", page.locator("#pwned").count() == 0)
    check("hostile script did not run", page.evaluate("typeof window.pwned") == "undefined")

    # The case's history: the trend, with its flip.
    page.goto(url + "/cases/flipper")
    expect(page.locator("svg#trend")).to_be_visible()
    check("the trend has a point per run", page.locator("svg#trend g.point").count() == 2)
    check("the flip is marked", page.locator("svg#trend g.point.flip").count() == 1)
    check("the flip is counted", page.locator("#flip-count").inner_text() == "1 flip")

    # Compare: the changed case first; its transcripts side by side.
    page.goto(url + "/")
    page.locator("table.runs tbody tr.run").nth(0).locator("a.compare-previous").click()
    compared = page.locator("table.compare tbody tr")
    expect(compared.first).to_be_visible()
    check("compare lists the changed case first",
          compared.nth(0).get_attribute("data-case") == "flipper",
          compared.nth(0).get_attribute("data-case"))
    check("compare lists every case", compared.count() == 3, str(compared.count()))
    compared.nth(0).locator("a.transcripts").click()
    expect(page.locator("#side-a")).to_be_visible()
    check("side by side: A's reply", "ok then" in page.locator("#side-a").inner_text())
    check("side by side: B's reply", "no then" in page.locator("#side-b").inner_text())

    check("no console errors", not errors, "; ".join(errors))
    browser.close()

if problems:
    print(f"{len(problems)} check(s) failed: {', '.join(problems)}", file=sys.stderr)
    sys.exit(1)
print("all browser checks passed")
