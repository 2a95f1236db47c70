"""axe-core in a real page: the accessibility rules browsers' own tools run, injected from the
vendored copy (tests/support/vendor/axe-core; nothing is downloaded), its serious and critical
violations as one line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from playwright.sync_api import Browser, Page, expect

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_violations(page: Page, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """`rule: target (impact): summary` for each node axe finds at one of `impacts`."""
    page.add_script_tag(path=str(AXE))
    result: dict[str, Any] = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    found = []
    for violation in result["violations"]:
        if violation.get("impact") not in impacts:
            continue
        for node in violation["nodes"]:
            target = " ".join(str(t) for t in node.get("target", []))
            summary = (node.get("failureSummary") or "").replace("\n", " ")[:200]
            found.append(f"{violation['id']}: {target} ({violation['impact']}): {summary}")
    return found


def axe_violations_on(
    browser: Browser,
    urls: list[str],
    theme: Literal["light", "dark"],
    shown: str,
    *,
    idle: bool = False,
) -> list[str]:
    """`axe_violations` of each of `urls` in a fresh 1440x900 page of `theme` ("light" or
    "dark"), once `shown` (a selector) is visible (`idle`: and the network is idle), each
    finding prefixed with its URL. CSP is bypassed: axe is injected as an inline script."""
    context = browser.new_context(
        color_scheme=theme, viewport={"width": 1440, "height": 900}, bypass_csp=True
    )
    try:
        page = context.new_page()
        found = []
        for url in urls:
            page.goto(url)
            expect(page.locator("html")).to_have_attribute("data-theme", theme)
            expect(page.locator(shown).first).to_be_visible()
            if idle:
                page.wait_for_load_state("networkidle")
            found += [f"{url}: {finding}" for finding in axe_violations(page)]
        return found
    finally:
        context.close()
