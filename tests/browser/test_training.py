"""The Training page in a real headless Chromium against real `manage.py train` servers hosting
the demo trainer (examples/demo-train.toml, copied to a temporary directory so its runs land
there): the offline previews, the form generated from the schema, the log filter, and a real
job driven through start, pause, resume and stop by the page's buttons.

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

from tests.support.browser import FAST_POLL_ENV, FAST_POLL_MS, Tab, live_timeout_ms
from tests.support.servers import REPO_ROOT, ServerProcess, get_json, request, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

TRAIN = (sys.executable, "manage.py", "train")
SPEC = REPO_ROOT / "examples" / "demo-train.toml"
LIVE_MS = live_timeout_ms(FAST_POLL_MS)
JOB_MS = 30_000  # a child process starting, pausing at a step boundary, or saving on a stop
NO_VALUE = "\u2013"  # what the page prints for a missing value (an en dash)
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
    expect(page.locator("#rv-train-fields .rv-field").first).to_be_visible()
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
    expect(reading.locator(".rv-reading-name")).to_have_text(PREVIEWS[name])
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
        f"{progress['throughput']:.1f} timesteps/s"
    )
    expect(page.locator("#rv-train-eta")).to_contain_text("ETA ")
    expect(page.locator("#rv-train-phase")).to_have_text(progress["phase"])
    phases = page.locator("#rv-train-phases li")
    expect(phases).to_have_count(min(24, len(progress["phases"])))  # the newest 24
    expect(phases.last).to_have_attribute("data-phase", progress["phases"][-1]["name"])
    expect(chip(page, "device")).to_have_text(snapshot["job"]["device"])
    # The episode table (newest first) and the recovery box, as a real run's are drawn.
    rows = snapshot["episodes"]["rows"]
    assert rows, "the preview has episode rows"
    expect(page.locator("#rv-episodes thead th")).to_have_text(snapshot["episodes"]["columns"])
    expect(page.locator("#rv-episodes tbody tr")).to_have_count(min(200, len(rows)))
    expect(page.locator("#rv-episodes tbody tr").first.locator("td").first).to_have_text(
        str(rows[-1][0])
    )
    resume = snapshot["recovery"]["resume"]
    expect(page.locator("#rv-train-recovery")).to_contain_text(
        f"Latest checkpoint: {resume['checkpoint']} at {resume['timesteps']} timesteps"
    )
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


def test_start_pause_resume_stop_with_the_buttons_following(tab, tmp_path):
    directory = tmp_path / "job"
    with start_trainer(directory) as server:
        page = open_page(tab, server)
        expect_buttons(page, start=True, pause=False, stop=False, resume_latest=False)
        expect(page.locator("#rv-train-locked")).to_be_hidden()
        page.fill("#rv-field-steps", "2000")
        page.fill("#rv-field-step_seconds", "0.05")
        page.click("#rv-train-start")

        expect_status(page, "running")
        expect_buttons(page, start=False, pause=True, stop=True, resume_latest=False)
        expect(page.locator("#rv-train-pause")).to_have_text("Pause")
        expect(page.locator("#rv-field-steps")).to_be_disabled()  # in the locked fieldset
        expect(page.locator("#rv-train-presets button").first).to_be_disabled()
        expect(page.locator("#rv-train-defaults")).to_be_disabled()
        expect(page.locator("#rv-train-locked")).to_be_visible()
        expect(page.locator("#rv-cards .rv-metric-card").first).to_be_visible(timeout=JOB_MS)
        expect(page.locator("#rv-trend-chart .rv-trend-point").first).to_be_attached()
        expect(page.locator("#rv-log li").first).to_be_attached()
        pid = get_json(server.url("/api/train/state"))[1]["job"]["pid"]
        expect(chip(page, "process")).to_contain_text(f"pid {pid}")
        expect(page.locator("#rv-train-pid")).to_have_text(str(pid))
        command = get_json(server.url("/api/train/state"))[1]["job"]["command_line"]
        expect(page.locator("#rv-train-command")).to_have_text(command)
        expect(page.locator("#rv-link-samples")).to_be_visible()
        page.reload()  # a page opened on a running job shows what it runs with, not defaults
        expect(page.locator("#rv-field-steps")).to_have_value("2000")
        expect(page.locator("#rv-field-step_seconds")).to_have_value("0.05")
        expect(page.locator("#rv-field-steps")).to_be_disabled()

        page.click("#rv-train-pause")
        expect_status(page, "paused")
        expect(page.locator("#rv-train-pause")).to_have_text("Resume")
        expect_buttons(page, start=False, pause=True, stop=True)
        held = page.locator("#rv-train-bar-text").text_content()
        page.click("#rv-train-pause")  # now "Resume"
        expect_status(page, "running")
        expect(page.locator("#rv-train-pause")).to_have_text("Pause")
        expect(page.locator("#rv-train-bar-text")).not_to_have_text(held or "", timeout=JOB_MS)

        page.click("#rv-train-stop")
        expect_status(page, "exited")
        expect(page.locator("#rv-train-exit")).to_have_text("0")
        expect_buttons(page, start=True, pause=False, stop=False, resume_latest=True)
        expect(page.locator("#rv-field-steps")).to_be_enabled()
        expect(page.locator("#rv-train-recovery")).to_contain_text("Latest checkpoint")
        snapshot = get_json(server.url("/api/train/state"))[1]
        assert snapshot["job"]["status"] == "exited"
        assert snapshot["job"]["exit_code"] == 0
        assert len(runs_of(directory)) == 1
        stopped_at = snapshot["progress"]["timesteps"]

        # Resume from the latest checkpoint: a new process of the job, its timesteps going on
        # from the old ones, its curve continuing the old points, its log after the old lines.
        old_lines = page.locator("#rv-log li").count()
        page.click("#rv-train-resume-latest")
        expect_status(page, "running")
        expect_buttons(page, start=False, pause=True, stop=True, resume_latest=False)
        resumed = get_json(server.url("/api/train/state"))[1]
        assert "--resume" in resumed["job"]["command"]
        expect(page.locator("#rv-log li.rv-log-line")).not_to_have_count(old_lines + 1)
        expect(page.locator("#rv-log li", has_text="the job resumed")).to_have_count(1)
        page.wait_for_function(  # the curve goes on past the old points
            """after => [...document.querySelectorAll("#rv-trend-chart .rv-trend-point-link")]
                .some(p => +p.dataset.step > after)""",
            arg=stopped_at,
            timeout=JOB_MS,
        )
        page.click("#rv-train-stop")
        expect_status(page, "exited")
        final = get_json(server.url("/api/train/state"))[1]
        assert final["progress"]["timesteps"] > stopped_at
        drawn = page.locator("#rv-trend-chart .rv-trend-point-link").evaluate_all(
            "ps => ps.map(p => +p.dataset.step)"
        )
        assert drawn == sorted(drawn) and drawn[0] < stopped_at < drawn[-1]
        assert drawn[-1] == final["metrics"]["points"][-1]["timesteps"]

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
    with page.expect_request(lambda r: r.url.endswith("/api/train/state")):
        page.click("#rv-train-refresh")
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
        expect(page.locator("#rv-train-exit")).to_have_text("0")
        expect(recovery).not_to_contain_text("Failed")
        final = get_json(server.url("/api/train/state"))[1]
        assert final["progress"]["timesteps"] > failure["timesteps"]
        tab.assert_clean()


def test_the_log_keeps_the_last_4000_lines_each_once(tab, trainer):
    page = open_page(tab, trainer)
    kept = page.evaluate(
        """() => {
            const el = {};
            const tags = {list: "ol", filter: "input", errors: "input", progress: "input",
                          follow: "input", count: "span"};
            for (const [name, tag] of Object.entries(tags)) {
                el[name] = document.createElement(tag);
                if (tag === "input" && name !== "filter") el[name].type = "checkbox";
            }
            el.progress.checked = true;
            const log = window.rvTraining.log(el);
            const lines = n => Array.from(
                {length: n}, (_, i) => ({n: i + 1, text: "line " + (i + 1), kind: "stdout"}));
            log.add(lines(3000));
            log.add(lines(4100));  // the first 3000 again: each line is kept once
            const items = [...el.list.children];
            return {count: items.length, first: items[0].dataset.n, last: items.at(-1).dataset.n,
                    text: el.count.textContent};
        }"""
    )
    assert kept == {"count": 4000, "first": "101", "last": "4100", "text": "4000 lines"}
    tab.assert_clean()
