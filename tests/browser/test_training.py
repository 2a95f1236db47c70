"""The Training page in a real headless Chromium against real `manage.py train` servers hosting
the demo trainer (examples/demo-train.toml, copied to a temporary directory so its runs land
there) or the small fake trainer (tests/support/fake_trainer.py: obey, ignore, crash): the
offline previews, the layout (the reading and the curve first), the form generated from the
schema and folded to one line while a job runs, the log filter, real jobs driven through
start, pause, resume and stop by the page's buttons, a resume with the page open (each log line
once, a curve segment per attempt), the episode pager, and the four ways a job ends.

What the page should show is read from the server's own JSON (the schema, a preview snapshot,
a 409 body), never from the page itself.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from rollouts.presentation import format_unit
from tests.support.browser import FAST_POLL_ENV, FAST_POLL_MS, Tab, live_timeout_ms
from tests.support.servers import (
    REPO_ROOT,
    ServerProcess,
    free_port,
    get_json,
    request,
    run_visualize,
)
from tests.support.training import write_fake_spec

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

TRAIN = (sys.executable, "manage.py", "train")
SPEC = REPO_ROOT / "examples" / "demo-train.toml"
LIVE_MS = live_timeout_ms(FAST_POLL_MS)
JOB_MS = 30_000  # a child process starting, pausing at a step boundary, or saving on a stop
NO_VALUE = "\u2013"  # what the page prints for a missing value (an en dash)
RANGE = "\u2013"  # between the first and last episode of a page (an en dash)
PREVIEWS = {"rising": "rising", "plateau": "plateau", "kl": "kl too large"}


def start_trainer(directory: Path) -> Any:
    directory.mkdir(parents=True, exist_ok=True)
    spec = directory / SPEC.name
    shutil.copy(SPEC, spec)
    return run_visualize(spec, "--no-browser", env=FAST_POLL_ENV, launcher=TRAIN)


@pytest.fixture(scope="module")
def trainer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the tests that start no job (previews, the form, the log filter)."""
    with start_trainer(tmp_path_factory.mktemp("train") / "job") as server:
        yield server


def open_page(tab: Tab, server: ServerProcess) -> Page:
    page = tab.page
    page.goto(server.url("/training/"))
    expect(page.locator("#rv-chip-connection")).to_have_attribute("data-connection", "live")
    # Built from the schema; folded away (not visible) while a job runs.
    expect(page.locator("#rv-train-fields .rv-field").first).to_be_attached()
    return page


def chip(page: Page, name: str) -> Any:
    return page.locator(f"#rv-chip-{name} .rv-chip-value")


def runs_of(directory: Path) -> list[str]:
    runs = directory / "runs"
    return sorted(p.name for p in runs.iterdir()) if runs.exists() else []


# -- the offline preview ---------------------------------------------------------------------
@pytest.mark.parametrize("name", PREVIEWS)
def test_the_preview_draws_cards_curve_reading_and_log_and_starts_nothing(tab, trainer, name):
    page = open_page(tab, trainer)
    snapshot = get_json(trainer.url(f"/api/train/state?preview={name}"))[1]
    schema = get_json(trainer.url("/api/train/schema"))[1]
    page.select_option("#rv-train-preview", name)

    reading = page.locator("#rv-reading")
    expect(reading).to_have_attribute("data-reading", PREVIEWS[name])
    verdict = snapshot["reading"]["verdict"]  # the server's words and tone, drawn as they are
    expect(reading.locator(".rv-reading-name")).to_have_text(verdict["label"])
    expect(reading.locator(".rv-reading-name")).to_have_class(
        re.compile(rf"\brv-learning-{verdict['tone']}\b")
    )
    numbers = reading.locator("tr[data-number]")
    expect(numbers).to_have_count(len(snapshot["reading"]["numbers"]) - 1)  # noise: in a rule
    cards = page.locator("#rv-cards .rv-metric-card")
    expect(cards).to_have_count(len(snapshot["cards"]))
    assert cards.evaluate_all("cs => cs.map(c => c.dataset.key)") == [
        c["key"] for c in snapshot["cards"]
    ]
    abnormal = [c["key"] for c in snapshot["cards"] if c["abnormal"]]
    expect(page.locator("#rv-cards .rv-abnormal")).to_have_count(len(abnormal))

    main_key = next(m["key"] for m in schema["metrics"] if m["key"] in snapshot["metrics"]["keys"])
    points = snapshot["metrics"]["points"]
    drawn = [p for p in points if isinstance(p["metrics"].get(main_key), int | float)]
    chart = page.locator("#rv-trend-chart")
    expect(chart).to_have_attribute("data-series", main_key)
    expect(chart.locator(".rv-trend-point")).to_have_count(len(drawn))
    expect(page.locator("#rv-log li")).to_have_count(len(snapshot["log"]["lines"]))
    expect(page.locator("#rv-chip-connection")).to_have_attribute("data-connection", "preview")
    expect(page.locator("#rv-chip-process")).to_have_attribute(
        "data-status", snapshot["job"]["status"]
    )
    expect(page.locator("#rv-train-command")).to_have_text(snapshot["job"]["command_line"])
    expect(page.locator("#rv-train-preview-note")).to_be_visible()
    # Progress and process: the throughput, the ETA of a live job, the phase timeline, device.
    progress = snapshot["progress"]
    expect(page.locator("#rv-train-throughput")).to_have_text(
        format_unit(progress["throughput"], "timesteps/s")  # "927 timesteps/s"
    )
    expect(page.locator("#rv-train-bar-text")).to_have_text(
        f"{progress['timesteps']:,} / {progress['total']:,} timesteps"
    )
    expect(page.locator("#rv-train-eta")).to_contain_text("ETA ")
    expect(page.locator("#rv-train-phase")).to_have_text(progress["phase"])
    phases = page.locator("#rv-train-phases li")
    expect(phases).to_have_count(min(24, len(progress["phases"])))  # the newest 24
    expect(phases.last).to_have_attribute("data-phase", progress["phases"][-1]["name"])
    # The timeline: a bar per timed phase in its kind's lane, a legend naming each kind.
    timed = [p for p in progress["phases"] if None not in (p["started_at"], p["seconds"])]
    bars = page.locator("#rv-train-timeline .rv-phase-bar")
    expect(bars).to_have_count(len(timed))
    assert bars.evaluate_all("bs => bs.map(b => b.dataset.kind)") == [p["kind"] for p in timed]
    legend = page.locator("#rv-train-phase-legend")
    for kind in {p["kind"] for p in timed}:
        expect(legend.locator(f'[data-kind="{kind}"]')).to_contain_text(kind)
    # The reading's notes: one line per rule, under the verdict.
    notes = reading.locator(".rv-reading-notes li")
    expect(notes).to_have_text(snapshot["reading"]["notes"])
    expect(chip(page, "device")).to_have_text(snapshot["job"]["device"])
    # The episode table (newest first) and the recovery box, as a real run's are drawn.
    rows = snapshot["episodes"]["rows"]
    assert rows, "the preview has episode rows"
    expect(page.locator("#rv-episodes thead th")).to_have_text(snapshot["episodes"]["columns"])
    expect(page.locator("#rv-episodes tbody tr")).to_have_count(min(200, len(rows)))
    expect(page.locator("#rv-episodes tbody tr").first.locator("td").first).to_have_text(
        str(rows[-1][0])
    )
    expect(page.locator("#rv-episodes-count")).to_have_text(
        f"{snapshot['episodes']['total']:,} episodes"
    )
    resume = snapshot["recovery"]["resume"]
    expect(page.locator("#rv-train-recovery")).to_contain_text(
        f"Latest checkpoint: {resume['checkpoint']} at {resume['timesteps']:,} timesteps"
    )
    checkpoints = page.locator("#rv-train-recovery .rv-train-checkpoints li")
    expect(checkpoints).to_have_count(len(snapshot["recovery"]["checkpoints"]))
    for button in ("pause", "stop", "start", "resume-latest"):
        expect(page.locator(f"#rv-train-{button}")).to_be_disabled()

    # The crosshair reads the value at the nearest timesteps.
    chart.hover()
    tooltip = page.locator("#rv-crosshair-values")
    expect(tooltip).to_be_visible()
    expect(tooltip.locator("strong")).to_contain_text("Timesteps ")
    hovered = int(tooltip.get_attribute("data-step") or "-1")
    assert hovered in [p["timesteps"] for p in drawn]

    # Clicking a card shows its curve; the metric switch does too.
    page.locator('#rv-cards .rv-metric-card[data-key="value_loss"]').click()
    expect(chart).to_have_attribute("data-series", "value_loss")
    expect(page.locator("#rv-series")).to_have_value("value_loss")

    # The KL curve carries its reference line (from the schema's metric dictionary).
    page.select_option("#rv-series", "approx_kl")
    expect(chart).to_have_attribute("data-series", "approx_kl")
    reference = schema_reference(schema, "approx_kl")
    line = chart.locator(f'.rv-reference[data-value="{reference["value"]}"]')
    expect(line).to_have_count(1)
    expect(line.locator("text")).to_have_text(reference["label"])
    if name == "kl":  # the reading's KL row holds: approx_kl above the threshold
        kl_row = reading.locator('tr[data-number="approx_kl"] td')
        expect(kl_row.nth(4)).to_have_text("yes")

    # Nothing was started: the real job is still idle and no run directory appeared.
    assert get_json(trainer.url("/api/train/state"))[1]["job"]["status"] == "idle"
    assert runs_of(trainer_dir(trainer)) == []
    tab.assert_clean()


def schema_reference(schema: dict[str, Any], key: str) -> dict[str, Any]:
    metric = next(m for m in schema["metrics"] if m["key"] == key)
    return metric["reference"][0]


def trainer_dir(server: ServerProcess) -> Path:
    """Where the server's spec is (its runs go there): [python, manage.py, train, SPEC, ...]."""
    args = server.proc.args
    assert isinstance(args, list)
    return Path(str(args[3])).parent


# -- the form ----------------------------------------------------------------------------------
def field_value(page: Page, field: dict[str, Any]) -> Any:
    input_ = page.locator(f"#rv-field-{field['name']}")
    if field["type"] == "bool":
        return input_.is_checked()
    raw = input_.input_value()
    return float(raw) if field["type"] in ("int", "float") else raw


def expected_value(field: dict[str, Any], value: Any) -> Any:
    return float(value) if field["type"] in ("int", "float") else value


def test_the_form_follows_the_schema_and_its_presets(tab, trainer):
    page = open_page(tab, trainer)
    schema = get_json(trainer.url("/api/train/schema"))[1]
    legends = page.locator("#rv-train-fields legend").all_text_contents()
    assert legends == [g["label"] for g in schema["groups"]]
    for field in schema["fields"]:
        row = page.locator(f'#rv-train-fields .rv-field[data-field="{field["name"]}"]')
        group = row.locator("xpath=ancestor::fieldset[1]")
        expect(group).to_have_attribute("data-group", field["group"])
        input_ = row.locator(f"#rv-field-{field['name']}")
        if field["type"] in ("int", "float"):
            expect(input_).to_have_attribute("type", "number")
            assert float(input_.get_attribute("min") or "nan") == field["min"]
            assert float(input_.get_attribute("max") or "nan") == field["max"]
        elif field["type"] == "bool":
            expect(input_).to_have_attribute("type", "checkbox")
        elif field["type"] == "choice":
            options = input_.locator("option").evaluate_all("os => os.map(o => o.value)")
            assert options == field["choices"]
        assert field_value(page, field) == expected_value(field, field["default"])

    for preset in schema["presets"]:
        page.locator(f'#rv-train-presets button[data-preset="{preset["name"]}"]').click()
        for field in schema["fields"]:
            wanted = preset["values"].get(field["name"], field["default"])
            assert field_value(page, field) == expected_value(field, wanted), (preset, field)
    tab.assert_clean()


def test_a_bad_value_shows_the_servers_message_beside_its_field(tab, trainer):
    page = open_page(tab, trainer)
    schema = get_json(trainer.url("/api/train/schema"))[1]
    steps = next(f for f in schema["fields"] if f["name"] == "steps")
    bad = steps["max"] + 1
    # What the server says about that value (a 409 starts nothing).
    body = json.dumps({"values": {"steps": bad}, "resume_latest": False}).encode()
    status, _, answer = request(
        trainer.url("/api/train/start"),
        method="POST",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    assert status == 409
    message = json.loads(answer)["errors"]["steps"]

    page.fill("#rv-field-steps", str(bad))
    page.click("#rv-train-start")
    error = page.locator('.rv-field[data-field="steps"] .rv-field-error')
    expect(error).to_be_visible()
    expect(error).to_have_text(message)
    expect(page.locator("#rv-field-steps")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#rv-train-message")).to_be_visible()
    others = page.locator(".rv-field-error:not([hidden])")
    expect(others).to_have_count(1)
    # Fixed, the message goes with the next answer; nothing was started meanwhile.
    assert get_json(trainer.url("/api/train/state"))[1]["job"]["status"] == "idle"
    assert [p for p in tab.problems() if "/api/train/start" not in p] == []


# -- the log -----------------------------------------------------------------------------------
def visible_lines(page: Page) -> list[dict[str, str]]:
    return page.locator("#rv-log li:not([hidden])").evaluate_all(
        "ls => ls.map(l => ({kind: l.dataset.kind, text: l.querySelector('.rv-log-text')"
        ".textContent}))"
    )


def test_the_log_filter_and_toggles_hide_lines(tab, trainer):
    page = open_page(tab, trainer)
    snapshot = get_json(trainer.url("/api/train/state?preview=rising"))[1]
    lines = snapshot["log"]["lines"]
    page.select_option("#rv-train-preview", "rising")
    expect(page.locator("#rv-log li")).to_have_count(len(lines))
    assert len(visible_lines(page)) == len(lines)

    word = 'timesteps": 2048,'  # one progress line holds it
    wanted = [line["text"] for line in lines if word.lower() in line["text"].lower()]
    assert 0 < len(wanted) < len(lines)
    page.fill("#rv-log-filter", word)
    expect(page.locator("#rv-log li:not([hidden])")).to_have_count(len(wanted))
    assert [line["text"] for line in visible_lines(page)] == wanted
    expect(page.locator("#rv-log-count")).to_have_text(f"{len(wanted)} of {len(lines)} lines")

    page.fill("#rv-log-filter", "")
    page.check("#rv-log-errors")
    errors = [line for line in lines if line["kind"] in ("stderr", "error")]
    assert errors
    expect(page.locator("#rv-log li:not([hidden])")).to_have_count(len(errors))
    assert {line["kind"] for line in visible_lines(page)} <= {"stderr", "error"}

    page.uncheck("#rv-log-errors")
    page.uncheck("#rv-log-progress")
    rest = [line for line in lines if line["kind"] != "progress"]
    expect(page.locator("#rv-log li:not([hidden])")).to_have_count(len(rest))
    assert all(line["kind"] != "progress" for line in visible_lines(page))
    page.check("#rv-log-progress")
    expect(page.locator("#rv-log li:not([hidden])")).to_have_count(len(lines))
    tab.assert_clean()


# -- a real job --------------------------------------------------------------------------------
def expect_buttons(page: Page, **enabled: bool) -> None:
    for name, on in enabled.items():
        button = page.locator(f"#rv-train-{name.replace('_', '-')}")
        if on:
            expect(button).to_be_enabled(timeout=LIVE_MS)
        else:
            expect(button).to_be_disabled(timeout=LIVE_MS)


def expect_status(page: Page, status: str) -> None:
    process = page.locator("#rv-chip-process")
    expect(process).to_have_attribute("data-status", status, timeout=JOB_MS)


def expect_outcome(page: Page, outcome: str) -> None:
    ended = page.locator("#rv-chip-outcome")
    expect(ended).to_have_attribute("data-outcome", outcome, timeout=JOB_MS)
    expect(ended).to_be_visible()


def start_job(page: Page, **values: str) -> None:
    """Fill the (idle, unfolded) form and press Start."""
    for name, value in values.items():
        page.fill(f"#rv-field-{name}", value)
    page.click("#rv-train-start")


def state_of(server: ServerProcess, query: str = "") -> dict[str, Any]:
    return get_json(server.url(f"/api/train/state{query}"))[1]


def test_start_pause_resume_stop_with_the_buttons_following(tab, tmp_path):
    directory = tmp_path / "job"
    with start_trainer(directory) as server:
        page = open_page(tab, server)
        expect_buttons(page, start=True, pause=False, stop=False, resume_latest=False)
        expect(page.locator("#rv-train-locked")).to_be_hidden()
        expect(page.locator("#rv-chip-outcome")).to_be_hidden()
        start_job(page, steps="2000", step_seconds="0.05")

        expect_status(page, "running")
        expect_buttons(page, start=False, pause=True, stop=True, resume_latest=False)
        expect(page.locator("#rv-train-pause")).to_have_text("Pause")
        expect(page.locator("#rv-field-steps")).to_be_disabled()  # in the locked fieldset
        expect(page.locator("#rv-train-presets button").first).to_be_disabled()
        expect(page.locator("#rv-train-defaults")).to_be_disabled()
        expect(page.locator("#rv-train-locked")).to_be_visible()
        expect(page.locator("#rv-chip-outcome")).to_be_hidden()  # an active job has none
        expect(page.locator("#rv-cards .rv-metric-card").first).to_be_visible(timeout=JOB_MS)
        expect(page.locator("#rv-trend-chart .rv-trend-point").first).to_be_attached()
        expect(page.locator("#rv-log li").first).to_be_attached()
        pid = state_of(server)["job"]["pid"]
        expect(chip(page, "process")).to_contain_text(f"pid {pid}")
        expect(page.locator("#rv-train-pid")).to_have_text(str(pid))
        command = state_of(server)["job"]["command_line"]
        expect(page.locator("#rv-train-command")).to_have_text(command)
        expect(page.locator("#rv-link-samples")).to_be_visible()
        page.reload()  # a page opened on a running job shows what it runs with, not defaults
        expect(page.locator("#rv-field-steps")).to_have_value("2000")
        expect(page.locator("#rv-field-step_seconds")).to_have_value("0.05")
        expect(page.locator("#rv-field-steps")).to_be_disabled()

        page.click("#rv-train-pause")
        expect_status(page, "paused")  # the script acknowledged: the server says so
        expect(page.locator("#rv-train-pause")).to_have_text("Resume")
        expect_buttons(page, start=False, pause=True, stop=True)
        held = page.locator("#rv-train-bar-text").text_content()
        page.click("#rv-train-pause")  # now "Resume"
        expect_status(page, "running")
        expect(page.locator("#rv-train-pause")).to_have_text("Pause")
        expect(page.locator("#rv-train-bar-text")).not_to_have_text(held or "", timeout=JOB_MS)

        page.click("#rv-train-stop")
        expect_status(page, "exited")
        expect_outcome(page, "stopped")
        expect(page.locator("#rv-train-exit")).to_have_text("0")
        expect_buttons(page, start=True, pause=False, stop=False, resume_latest=True)
        expect(page.locator("#rv-field-steps")).to_be_visible()  # unfolded again
        expect(page.locator("#rv-field-steps")).to_be_enabled()
        expect(page.locator("#rv-train-recovery")).to_contain_text("Latest checkpoint")
        snapshot = state_of(server)
        assert snapshot["job"]["status"] == "exited"
        assert snapshot["job"]["exit_code"] == 0
        assert len(runs_of(directory)) == 1

        # The links lead into the viewer, whose header leads back.
        listed = get_json(server.url("/api/jsonl/train/steps"))[1]["steps"]
        last = max(s["step"] for s in listed)  # the newest step the run wrote
        expect(page.locator("#rv-link-stats")).to_have_attribute(
            "href", re.compile(rf"/train/{last}/stats/$")
        )
        page.click("#rv-link-samples")
        page.wait_for_url("**/train/*/")
        page.click("#rv-training-link")
        page.wait_for_url("**/training/")
        expect_status(page, "exited")
        tab.assert_clean()


# -- the layout ----------------------------------------------------------------------------------
def test_the_reading_and_the_curve_come_first_then_progress_form_log_and_episodes(tab, trainer):
    page = open_page(tab, trainer)
    order = page.evaluate(
        """() => {
            const ids = ["rv-train-top", "rv-reading", "rv-trend-chart", "rv-cards",
                         "rv-train-progress", "rv-train-config", "rv-train-log",
                         "rv-train-episodes"];
            const all = [...document.querySelectorAll("#rv-main *")];
            return ids.map(id => [id, all.indexOf(document.getElementById(id))]);
        }"""
    )
    places = [place for _, place in order]
    assert -1 not in places, order
    assert places == sorted(places), order  # document order, as read and as tabbed through
    boxes = [
        page.locator(f"#{name}").bounding_box()
        for name in ("rv-reading", "rv-trend-chart", "rv-train-progress")
    ]
    tops = [box["y"] if box else -1.0 for box in boxes]
    assert 0 <= tops[0] < tops[1] < tops[2], tops
    tab.assert_clean()


def as_text(value: Any) -> str:
    """A value as the page's summary line prints it (JavaScript's String())."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_while_a_job_runs_the_form_folds_to_the_values_in_force(tab, tmp_path):
    with start_trainer(tmp_path / "job") as server:
        page = open_page(tab, server)
        expect(page.locator("#rv-train-values")).to_be_hidden()  # idle: the form as it is
        expect(page.locator("#rv-field-steps")).to_be_visible()
        start_job(page, steps="2000", step_seconds="0.05", seed="7")
        expect_status(page, "running")

        # One line of the values the job runs with, in the schema's order; no form in view.
        schema = get_json(server.url("/api/train/schema"))[1]
        values = state_of(server)["job"]["values"]
        line = " · ".join(
            f"{f['name']} {as_text(values[f['name']])}"
            for f in schema["fields"]
            if f["name"] in values
        )
        summary = page.locator("#rv-train-values-text")
        expect(summary).to_be_visible()
        expect(summary).to_have_text(line)
        expect(summary.locator('[data-field="seed"]')).to_have_text("seed 7")
        expect(page.locator("#rv-field-steps")).to_be_hidden()
        expect(page.locator("#rv-train-presets")).to_be_hidden()

        # The toggle shows the whole form, locked; and folds it again.
        toggle = page.locator("#rv-train-form-toggle")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.focus()
        page.keyboard.press("Enter")  # keyboard reachable
        expect(toggle).to_have_attribute("aria-expanded", "true")
        expect(page.locator("#rv-field-steps")).to_be_visible()
        expect(page.locator("#rv-field-steps")).to_be_disabled()
        expect(page.locator("#rv-field-steps")).to_have_value("2000")
        toggle.click()
        expect(page.locator("#rv-field-steps")).to_be_hidden()

        page.click("#rv-train-stop")
        expect_status(page, "exited")
        expect(page.locator("#rv-train-values")).to_be_hidden()
        expect(page.locator("#rv-field-steps")).to_be_visible()
        expect(page.locator("#rv-field-steps")).to_be_enabled()
        tab.assert_clean()


# -- a resume with the page open ---------------------------------------------------------------
def page_log_numbers(page: Page) -> list[int]:
    return page.locator("#rv-log li[data-n]").evaluate_all("ls => ls.map(l => +l.dataset.n)")


def test_a_resume_with_the_page_open_keeps_each_log_line_once_and_a_segment_per_attempt(
    tab, tmp_path
):
    with start_trainer(tmp_path / "job") as server:
        page = open_page(tab, server)
        start_job(page, steps="2000", step_seconds="0.05")
        expect_status(page, "running")
        expect(page.locator("#rv-trend-chart .rv-trend-point").nth(3)).to_be_attached(
            timeout=JOB_MS
        )
        page.click("#rv-train-stop")
        expect_status(page, "exited")
        stopped = state_of(server)
        stopped_at = stopped["progress"]["timesteps"]

        # Resume from the latest checkpoint: a new attempt of the same job, its log after the
        # old lines (a marker between), its curve a segment of its own, marked where it began.
        page.click("#rv-train-resume-latest")
        expect_status(page, "running")
        expect_buttons(page, start=False, pause=True, stop=True, resume_latest=False)
        resumed = state_of(server)
        assert "--resume" in resumed["job"]["command"]
        assert resumed["job"]["id"] == stopped["job"]["id"]
        page.wait_for_function(  # the curve goes on past the old points
            """after => [...document.querySelectorAll("#rv-trend-chart .rv-trend-point-link")]
                .some(p => +p.dataset.step > after)""",
            arg=stopped_at,
            timeout=JOB_MS,
        )
        page.click("#rv-train-stop")
        expect_status(page, "exited")
        final = state_of(server, "?log_tail=4000")
        cursor = final["log"]["cursor"]
        assert cursor < 4000, "the test reads every line: keep the job short"

        # Each line once: the page holds exactly the server's numbered lines, in order.
        page.wait_for_function(
            "n => Math.max(...[...document.querySelectorAll('#rv-log li[data-n]')]"
            ".map(l => +l.dataset.n)) === n",
            arg=cursor,
            timeout=LIVE_MS,
        )
        numbers = page_log_numbers(page)
        assert numbers == [line["n"] for line in final["log"]["lines"]]
        assert len(numbers) == len(set(numbers)) == cursor
        expect(page.locator("#rv-log-count")).to_have_text(f"{cursor:,} lines")
        marker = page.locator("#rv-log li.rv-log-marker")
        expect(marker).to_have_count(1)
        expect(marker).to_contain_text("the job resumed (attempt 2)")

        # A line per attempt, the first ending where it was stopped, the second starting where
        # it resumed; the resume marked on the curve with its checkpoint.
        attempts = final["metrics"]["attempts"]
        assert [a["index"] for a in attempts] == [0, 1]
        chart = page.locator("#rv-trend-chart")
        expect(chart).to_have_attribute("data-attempts", "2")
        lines = chart.locator(".rv-trend-line")
        expect(lines).to_have_count(2)
        steps = lines.evaluate_all(
            "ls => ls.map(l => [...l.querySelectorAll('.rv-trend-point-link')]"
            ".map(p => +p.dataset.step))"
        )
        key = chart.get_attribute("data-series")
        for attempt, drawn in enumerate(steps):
            kept = [
                p["timesteps"]
                for p in final["metrics"]["points"]
                if p.get("attempt", 0) == attempt and isinstance(p["metrics"].get(key), float)
            ]
            assert drawn == kept, attempt
        assert steps[0][-1] <= stopped_at < steps[1][-1]
        assert steps[1][0] >= attempts[1]["start_timesteps"]
        mark = chart.locator(".rv-resume")
        expect(mark).to_have_count(1)
        expect(mark).to_have_attribute("data-timesteps", str(attempts[1]["start_timesteps"]))
        expect(mark.locator("title")).to_contain_text(f"resumed from {attempts[1]['resumed_from']}")
        tab.assert_clean()


def test_a_restarted_viewer_is_read_whole_once_its_log_cursor_goes_back(tab, tmp_path):
    """The first viewer's log has its own lines ("[viewer] stop requested"); the second reads
    only the job's files again, so its cursor is smaller: the page reads it whole, each line
    once, rather than waiting for lines past its old cursor."""
    directory, port = tmp_path / "job", free_port()
    directory.mkdir()
    shutil.copy(SPEC, directory / SPEC.name)
    spec = directory / SPEC.name
    with run_visualize(spec, "--no-browser", port=port, env=FAST_POLL_ENV, launcher=TRAIN) as one:
        page = open_page(tab, one)
        start_job(page, steps="2000", step_seconds="0.05")
        expect_status(page, "running")
        expect(page.locator("#rv-trend-chart .rv-trend-point").nth(2)).to_be_attached(
            timeout=JOB_MS
        )
        page.click("#rv-train-stop")
        expect_status(page, "exited")
        before = state_of(one)["log"]["cursor"]
        page.wait_for_function(
            "n => document.querySelectorAll('#rv-log li[data-n]').length === n",
            arg=before,
            timeout=LIVE_MS,
        )
    connection = page.locator("#rv-chip-connection")
    expect(connection).to_have_attribute("data-connection", "lost", timeout=LIVE_MS)
    with run_visualize(spec, "--no-browser", port=port, env=FAST_POLL_ENV, launcher=TRAIN) as two:
        after = state_of(two, "?log_tail=4000")["log"]
        assert after["cursor"] < before, "the restarted viewer's log should be shorter"
        expect(connection).to_have_attribute("data-connection", "live", timeout=LIVE_MS)
        wanted = [line["n"] for line in after["lines"]]
        page.wait_for_function(
            "n => document.querySelectorAll('#rv-log li[data-n]').length === n",
            arg=len(wanted),
            timeout=LIVE_MS,
        )
        assert page_log_numbers(page) == wanted
        expect_status(page, "exited")
    assert tab.page_errors == []


# -- the episodes ------------------------------------------------------------------------------
def first_episode(page: Page) -> int:
    return int(page.locator("#rv-episodes tbody tr").first.locator("td").first.inner_text())


def episode_range(first: int, last: int, total: int) -> str:
    return f"episodes {first:,}{RANGE}{last:,} of {total:,}, newest first"


def test_the_episode_table_pages_through_every_episode_and_counts_them(tab, tmp_path):
    with start_trainer(tmp_path / "job") as server:
        page = open_page(tab, server)
        # 10 steps of 64 samples: an episode row per sample, more than 3 pages of 200.
        start_job(page, steps="10", step_seconds="0.01", samples_per_step="64")
        expect_status(page, "exited")
        total = state_of(server)["episodes"]["total"]
        assert total > 600

        count = page.locator("#rv-episodes-count")
        shown = page.locator("#rv-episodes-range")
        rows = page.locator("#rv-episodes tbody tr")
        newer, older = page.locator("#rv-episodes-newer"), page.locator("#rv-episodes-older")
        expect(count).to_have_text(f"{total:,} episodes", timeout=LIVE_MS)
        expect(shown).to_have_text(episode_range(total - 199, total, total))
        expect(rows).to_have_count(200)
        assert first_episode(page) == total  # newest first
        expect(newer).to_be_disabled()

        last = total
        while last > 200:
            last -= 200
            older.click()
            first = max(1, last - 199)
            expect(shown).to_have_text(episode_range(first, last, total))
            expect(rows).to_have_count(last - first + 1)
            assert first_episode(page) == last
            expect(newer).to_be_enabled()
        expect(older).to_be_disabled()  # the oldest page
        with page.expect_request(lambda r: f"episodes_offset={total - last}" in r.url):
            pass  # the polls ask for the page being read
        newer.click()
        expect(shown).to_have_text(episode_range(last + 1, last + 200, total))
        page.click("#rv-episodes-newest")
        expect(shown).to_have_text(episode_range(total - 199, total, total))
        expect(newer).to_be_disabled()
        tab.assert_clean()


def test_an_older_episode_page_stays_put_while_the_first_follows_the_newest(tab, tmp_path):
    with start_trainer(tmp_path / "job") as server:
        page = open_page(tab, server)
        start_job(page, steps="2000", step_seconds="0.1", samples_per_step="64")
        expect_status(page, "running")
        count = page.locator("#rv-episodes-count")
        page.wait_for_function(  # more than a page of episodes
            "() => +document.getElementById('rv-episodes').dataset.total > 400", timeout=JOB_MS
        )
        page.click("#rv-episodes-older")
        expect(page.locator("#rv-episodes-newer")).to_be_enabled()
        held = first_episode(page)
        seen = count.text_content()
        expect(count).not_to_have_text(seen or "", timeout=JOB_MS)  # more episodes came
        assert first_episode(page) == held  # the rows being read did not move
        page.click("#rv-episodes-older")  # paging goes on from the rows in view
        page.wait_for_function(
            "n => +document.querySelector('#rv-episodes tbody tr td').textContent === n",
            arg=held - 200,
            timeout=LIVE_MS,
        )
        page.click("#rv-episodes-newest")
        expect(page.locator("#rv-episodes-newer")).to_be_disabled()
        page.wait_for_function(  # page 1 follows the newest row
            """() => {
                const table = document.getElementById("rv-episodes");
                const first = table.querySelector("tbody tr td");
                return first && +first.textContent === +table.dataset.total;
            }""",
            timeout=LIVE_MS,
        )
        page.click("#rv-train-stop")
        expect_status(page, "exited")
        tab.assert_clean()


# -- a pause the script does not acknowledge ------------------------------------------------------
def test_a_pause_the_script_does_not_acknowledge_stays_pausing_with_the_servers_note(tab, tmp_path):
    """`ignore` never reads the control file: the server keeps the job "pausing" (paused only
    after an acknowledgement) and after a while says why in `job.note`, shown by the status."""
    spec = write_fake_spec(tmp_path, grace=1.0, step_seconds=0.05)
    with run_visualize(spec, "--no-browser", env=FAST_POLL_ENV, launcher=TRAIN) as server:
        page = open_page(tab, server)
        page.select_option("#rv-field-mode", "ignore")
        start_job(page, steps="4000")
        expect_status(page, "running")
        note = page.locator("#rv-train-note")
        expect(note).to_be_hidden()
        page.click("#rv-train-pause")
        expect_status(page, "pausing")
        expect(page.locator("#rv-train-pause")).to_have_text("Resume")
        expect(note).to_be_visible(timeout=JOB_MS)
        said = state_of(server)["job"]["note"]
        assert said and state_of(server)["job"]["status"] == "pausing"
        expect(note).to_have_text(said)
        expect(note).to_have_attribute("role", "status")
        expect(page.locator("#rv-chip-process")).to_have_attribute("data-status", "pausing")
        page.click("#rv-train-stop")
        expect_outcome(page, "forced")
        expect(note).to_be_hidden()
    assert [p for p in tab.problems() if "/api/train/" not in p] == []


# -- how a job ended ---------------------------------------------------------------------------
def test_stopped_forced_failed_and_finished_look_different(tab, tmp_path):
    """The fake trainer: `obey` stops when asked, `ignore` never reads the control file (killed
    after the 1 s grace period), `crash` raises; a short `obey` run finishes."""
    spec = write_fake_spec(tmp_path, grace=1.0, step_seconds=0.05)
    looks: dict[str, tuple[str, str]] = {}
    with run_visualize(spec, "--no-browser", env=FAST_POLL_ENV, launcher=TRAIN) as server:
        page = open_page(tab, server)
        ended = page.locator("#rv-chip-outcome")

        def end(outcome: str) -> None:
            expect_outcome(page, outcome)
            assert state_of(server)["job"]["outcome"] == outcome
            text = ended.locator(".rv-chip-value").inner_text()
            colour = ended.evaluate("e => getComputedStyle(e).backgroundColor")
            looks[outcome] = (text, colour)

        for mode, outcome in (("obey", "stopped"), ("ignore", "forced")):
            page.select_option("#rv-field-mode", mode)
            start_job(page, steps="4000")
            expect_status(page, "running")
            expect(ended).to_be_hidden()
            page.click("#rv-train-stop")
            end(outcome)
        expect(page.locator("#rv-train-exit")).to_contain_text("killed after the grace period")

        page.select_option("#rv-field-mode", "crash")
        start_job(page, steps="40", crash_at="3")
        end("failed")
        reading = page.locator("#rv-reading")
        expect(reading).to_have_attribute("data-reading", state_of(server)["reading"]["reading"])
        colour = "e => getComputedStyle(e).color"
        name = reading.locator(".rv-reading-name")
        assert name.evaluate(colour) == ended.evaluate(colour)  # the error colour, never green

        page.select_option("#rv-field-mode", "obey")
        start_job(page, steps="3")
        end("finished")

        assert {text for text, _ in looks.values()} == {"stopped", "forced stop", "failed",
                                                        "finished"}  # fmt: skip
        assert len({colour for _, colour in looks.values()}) == 4, looks
    assert [p for p in tab.problems() if "/api/train/" not in p] == []


def test_an_idle_host_shows_its_chips_and_no_job(tab, trainer):
    page = open_page(tab, trainer)
    state = get_json(trainer.url("/api/train/state"))[1]
    assert state["job"]["status"] == "idle"
    expect(chip(page, "process")).to_have_text("idle")
    expect(page.locator("#rv-train-summary")).to_have_text("no job yet")
    expect(chip(page, "wall")).to_have_text(NO_VALUE)
    expect_buttons(page, start=True, pause=False, stop=False, resume_latest=False)
    expect(page.locator("#rv-link-samples")).to_be_hidden()

    # Polls carry the cursors of the last answer; Refresh reads everything again.
    with page.expect_request(lambda r: "/api/train/state?after_metric=" in r.url) as polled:
        pass
    cursors = parse_qs(urlsplit(polled.value.url).query)
    assert cursors["after_metric"] == [str(state["metrics"]["cursor"])]
    assert cursors["after_log"] == [str(state["log"]["cursor"])]
    with page.expect_request(lambda r: r.url.endswith("/api/train/state?log_tail=4000")):
        page.click("#rv-train-refresh")  # the whole log the server keeps, no cursor
    tab.assert_clean()


def test_the_connection_chip_says_when_the_server_is_gone(tab, tmp_path):
    with start_trainer(tmp_path / "job") as server:
        page = open_page(tab, server)
        server.stop()
        connection = page.locator("#rv-chip-connection")
        expect(connection).to_have_attribute("data-connection", "lost", timeout=LIVE_MS)
        expect(connection.locator(".rv-chip-value")).to_have_text("lost, retrying")
    assert tab.page_errors == []
    assert all("/api/train/state" in error for error in tab.console_errors)  # refused, no more


def test_a_crashed_job_shows_its_failure_and_resumes_from_its_checkpoint(tab, tmp_path):
    with start_trainer(tmp_path / "job") as server:
        page = open_page(tab, server)
        schema = get_json(server.url("/api/train/schema"))[1]
        crash = next(p for p in schema["presets"] if p["values"].get("inject_failure"))
        page.locator(f'#rv-train-presets button[data-preset="{crash["name"]}"]').click()
        expect(page.locator("#rv-field-inject_failure")).to_be_checked()
        page.fill("#rv-field-step_seconds", "0.05")
        page.click("#rv-train-start")

        expect_status(page, "failed")
        expect_outcome(page, "failed")
        state = get_json(server.url("/api/train/state"))[1]
        failure = state["recovery"]["failure"]
        assert state["job"]["exit_code"] not in (0, None)
        expect(page.locator("#rv-train-exit")).to_have_text(str(state["job"]["exit_code"]))
        recovery = page.locator("#rv-train-recovery")
        expect(recovery).to_contain_text(f"Failed at step {failure['step']}: {failure['error']}")
        expect(page.locator("#rv-log li.rv-log-stderr").first).to_be_attached()
        expect_buttons(page, start=True, pause=False, stop=False, resume_latest=True)

        page.click("#rv-train-resume-latest")
        expect_status(page, "exited")  # past the failing step, to the last one
        expect_outcome(page, "finished")
        expect(page.locator("#rv-train-exit")).to_have_text("0")
        expect(recovery).not_to_contain_text("Failed")
        final = get_json(server.url("/api/train/state"))[1]
        assert final["progress"]["timesteps"] > failure["timesteps"]
        tab.assert_clean()


def test_the_log_keeps_the_last_4000_lines_each_once(tab, trainer):
    page = open_page(tab, trainer)
    kept = page.evaluate(
        """async () => {
            // The page's own module (the same instance its entry imported), by a URL relative
            // to the entry's, as the modules find each other.
            const entry = document.querySelector('script[type="module"]').src;
            const { createLog } = await import(new URL("../training-log.js", entry));
            const el = {};
            const tags = {list: "ol", filter: "input", errors: "input", progress: "input",
                          follow: "input", count: "span"};
            for (const [name, tag] of Object.entries(tags)) {
                el[name] = document.createElement(tag);
                if (tag === "input" && name !== "filter") el[name].type = "checkbox";
            }
            el.progress.checked = true;
            const log = createLog(el);
            const lines = n => Array.from(
                {length: n}, (_, i) => ({n: i + 1, text: "line " + (i + 1), kind: "stdout"}));
            log.add(lines(3000));
            log.add(lines(4100));  // the first 3000 again: each line is kept once
            const items = [...el.list.children];
            return {count: items.length, first: items[0].dataset.n, last: items.at(-1).dataset.n,
                    text: el.count.textContent};
        }"""
    )
    assert kept == {"count": 4000, "first": "101", "last": "4100", "text": "4,000 lines"}
    tab.assert_clean()
