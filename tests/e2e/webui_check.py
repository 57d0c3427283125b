"""A person's view of a plan review in the Temporal Web UI, checked in headless Chromium.

Not part of `make test` (it needs Debian's chromium and PyPI's playwright, which the project does
not install). By hand, with `make dev` running and a research waiting for its plan review:

    python -m starter research "How do asyncio tasks get cancelled?" --review-plan --detach --id webui-1
    /path/to/venv-with-playwright/bin/python tests/e2e/webui_check.py webui-1

It checks that the User Metadata tab's current details say a plan review is pending and what to
send, that More Actions → Send a Signal lists `plan_review` and `report_review`, and sends
`{"decision": "approve"}` as a person would. Then `python -m starter result webui-1 --json` shows the
review with `by: "person"`.
"""

from __future__ import annotations

import asyncio
import re
import sys

from playwright.async_api import async_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


async def main(workflow_id: str, ui: str = "http://localhost:8233") -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(f"{ui}/namespaces/default/workflows/{workflow_id}")
        await page.get_by_text("User Metadata").first.click()
        await page.wait_for_timeout(2000)
        details = "\n".join([await f.inner_text("body") for f in page.frames])
        assert (
            "Waiting for a review of the plan" in details and '"decision": "approve"' in details
        ), details
        await page.get_by_role("button", name="More Actions").click()
        await page.get_by_role("menuitem", name=re.compile("Send a Signal")).click()
        dialog = page.get_by_role("dialog")
        await dialog.get_by_role("button").nth(1).click()  # the signal-name picker
        await page.get_by_role("option").filter(has_text="plan_review").wait_for()
        offered = [await o.inner_text() for o in await page.get_by_role("option").all()]
        assert "plan_review" in offered and "report_review" in offered, offered
        await page.get_by_role("option").filter(has_text="plan_review").click()
        await dialog.locator(".cm-content, textarea, [contenteditable=true]").first.click()
        await page.keyboard.type('{"decision": "approve"}')
        await page.get_by_role("button", name="Submit").last.click()
        await page.wait_for_timeout(2000)
        await browser.close()
    print(f"plan review of {workflow_id} approved through the Web UI")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
