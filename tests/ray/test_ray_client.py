"""The training API on the Ray backend without a cluster: Ray's own client, pointed at a loopback
port nothing listens on (no namespace needed: the connection is refused on 127.0.0.1). Not in
the fast tier: importing Ray's client takes about a second."""

from __future__ import annotations

import pytest

from tests.support.servers import REPO_ROOT, free_port

pytestmark = pytest.mark.ray
pytest.importorskip("ray.job_submission", reason="the ray extra (./run test installs it)")

DEMO = REPO_ROOT / "examples" / "demo-train.toml"


def test_starting_on_an_unreachable_cluster_is_a_503_and_leaves_nothing(client, settings, hosted):
    closed = f"http://127.0.0.1:{free_port()}"
    settings.ROLLOUTS_TRAIN_BACKEND = "ray"
    settings.ROLLOUTS_TRAIN_RAY_ADDRESS = closed
    response = client.post(
        "/portal/rollouts/api/train/start", "{}", content_type="application/json"
    )
    assert response.status_code == 503
    assert response.json()["message"].startswith(f"cluster unreachable at {closed}")
    state = client.get("/portal/rollouts/api/train/state").json()
    assert state["job"]["status"] == "idle"
    assert state["job"]["backend"] == {
        "kind": "ray",
        "address": closed,
        "submission_id": None,
        "reachable": False,
        "message": response.json()["message"],
        "ray_status": None,
    }
    assert not (hosted.parent / "runs").exists()
