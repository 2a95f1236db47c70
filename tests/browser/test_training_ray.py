"""The Training page of `manage.py train --backend ray` in a real headless Chromium, when the
cluster does not answer: Start says so in one line, the cluster chip says "cluster unreachable",
and nothing is started. (A running Ray job on the page's chips is in tests/ray: a real head.)"""

from __future__ import annotations

import shutil
import sys

import pytest
from playwright.sync_api import expect

from tests.support.servers import REPO_ROOT, free_port, get_json, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

try:
    import ray.job_submission  # noqa: F401
except ImportError:
    pytestmark.append(pytest.mark.skip(reason="Ray is not installed (pip install '.[ray]')"))


def test_an_unreachable_cluster_is_said_on_the_page_and_starts_nothing(tab, tmp_path):
    spec = tmp_path / "demo-train.toml"
    shutil.copy(REPO_ROOT / "examples" / "demo-train.toml", spec)
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    args = ("--no-browser", "--backend", "ray", "--ray-address", closed)
    with run_visualize(spec, *args, launcher=(sys.executable, "manage.py", "train")) as server:
        page = tab.page
        page.goto(server.url("/training/"))
        expect(page.locator("#rv-chip-connection")).to_have_attribute("data-connection", "live")
        cluster = page.locator("#rv-chip-cluster")
        expect(cluster).to_be_visible()  # a Ray spec shows where its jobs go
        expect(cluster.locator(".rv-chip-value")).to_have_text("ray")
        expect(cluster).to_have_attribute("title", closed)
        page.click("#rv-train-start")
        message = page.locator("#rv-train-message")
        expect(message).to_be_visible()
        expect(message).to_contain_text(f"cluster unreachable at {closed}")
        expect(cluster.locator(".rv-chip-value")).to_have_text("cluster unreachable")
        expect(cluster).to_have_attribute("data-reachable", "no")
        expect(page.locator("#rv-train-job-message")).to_contain_text("cluster unreachable")
        expect(page.locator("#rv-chip-process .rv-chip-value")).to_have_text("idle")
        state = get_json(server.url("/api/train/state"))[1]
        assert state["job"]["status"] == "idle" and state["job"]["backend"]["reachable"] is False
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_local_spec_shows_no_cluster_chip(tab, tmp_path):
    spec = tmp_path / "demo-train.toml"
    shutil.copy(REPO_ROOT / "examples" / "demo-train.toml", spec)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        page = tab.page
        page.goto(s.url("/training/"))
        expect(page.locator("#rv-chip-connection")).to_have_attribute("data-connection", "live")
        expect(page.locator("#rv-chip-cluster")).to_be_hidden()
