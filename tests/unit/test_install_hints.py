"""Install hints fit how the viewer was installed: `pip install -e ".[EXTRA]"` in a checkout,
the extra's own requirements (from the installed metadata) otherwise; never a path."""

from __future__ import annotations

import re
import sys
import tomllib

import pytest
from packaging.requirements import Requirement

import rollouts.tui
from rollouts.demo.cli import NO_SCALARS
from rollouts.install import install_hint, is_checkout
from rollouts.store.scalars.support import INSTALL_HINT as SCALARS_HINT
from rollouts.training.backends import INSTALL_RAY
from rollouts.web.tokenizer import INSTALL_TOKENS
from tests.support.servers import REPO_ROOT

EXTRAS = ("tui", "ray", "tokens", "tensorboard")  # the ones the viewer's messages name


def declared(extra: str) -> list[Requirement]:
    with (REPO_ROOT / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    return [Requirement(line) for line in project["optional-dependencies"][extra]]


def quoted(hint: str) -> list[Requirement]:
    assert hint.startswith("pip install ")
    return [Requirement(text) for text in re.findall(r'"([^"]+)"', hint)]


@pytest.mark.parametrize("extra", EXTRAS)
def test_in_this_checkout_the_hint_installs_the_extra_editable(extra):
    assert is_checkout(REPO_ROOT)
    assert install_hint(extra) == f'pip install -e ".[{extra}]" (in the checkout)'


@pytest.mark.parametrize("extra", EXTRAS)
def test_outside_a_checkout_the_hint_lists_the_extras_requirements(tmp_path, extra):
    """As from a wheel: no pyproject.toml above the package, the installed metadata is read."""
    hint = install_hint(extra, root=tmp_path)
    assert quoted(hint) == declared(extra)
    assert "-e" not in hint and "checkout" not in hint and "relax-rollout-viewer" not in hint


def test_another_projects_pyproject_is_no_checkout(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    assert install_hint("tui", root=tmp_path) == install_hint("tui", root=tmp_path / "none")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "pyproject.toml").write_text("[project\n")
    assert not is_checkout(tmp_path) and not is_checkout(tmp_path / "broken")


def test_an_extra_the_metadata_does_not_name_is_asked_for_by_the_packages_name(tmp_path):
    assert install_hint("nosuch", root=tmp_path) == 'pip install "relax-rollout-viewer[nosuch]"'


@pytest.mark.parametrize("extra", EXTRAS)
def test_hints_never_hold_a_path(tmp_path, extra):
    for hint in (install_hint(extra), install_hint(extra, root=tmp_path)):
        assert "/" not in hint and str(REPO_ROOT) not in hint


@pytest.mark.parametrize(
    ("message", "extra"),
    [
        (INSTALL_TOKENS, "tokens"),
        (INSTALL_RAY, "ray"),
        (rollouts.tui.INSTALL_HINT, "tui"),
        (SCALARS_HINT, "tensorboard"),
        (NO_SCALARS, "tensorboard"),
    ],
)
def test_the_viewers_messages_end_with_the_hint(message, extra):
    assert message.endswith(install_hint(extra))
    assert 'pip install ".[' not in message and "relax-rollout-viewer[" not in message


def test_api_scalars_answers_503_with_the_hint_without_tensorboard(
    client, settings, tmp_path, monkeypatch
):
    save = tmp_path / "save"
    (save / "rollout_result" / "train").mkdir(parents=True)
    (save / "tensorboard_log").mkdir()
    (save / "tensorboard_log" / "events.out.tfevents.1.host").write_bytes(b"")
    settings.ROLLOUTS_DATA_DIR = str(save / "rollout_result")
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as when the extra is not installed
    response = client.get("/portal/rollouts/api/scalars")
    assert response.status_code == 503
    body = response.json()
    assert body["message"] == (
        "TensorBoard scalars need the optional tensorboard package: " + install_hint("tensorboard")
    )
    assert str(tmp_path) not in response.content.decode()
