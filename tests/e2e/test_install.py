"""The viewer as a user installs it: the `relax-viewer` console script and the built wheel."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rollouts.demo import write_demo
from tests.support.servers import REPO_ROOT, child_env, request, run_visualize

pytestmark = pytest.mark.e2e

CONSOLE_SCRIPT = Path(sys.executable).parent / "relax-viewer"
NOT_SOURCES = (".git", ".venv", "demo-data", "test-artifacts", "build", "*.egg-info", "__pycache__")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"))


def test_console_script_serves_the_viewer_with_the_same_flags(demo_dir: Path) -> None:
    assert CONSOLE_SCRIPT.is_file(), "pip install -e . installs the relax-viewer script"
    with run_visualize(demo_dir, "--cache-entries", "3", launcher=[str(CONSOLE_SCRIPT)]) as srv:
        status, headers, body = request(srv.url("/"))
        assert status == 200
        assert headers["content-type"].startswith("text/html")
        assert b'class="rv-position">Sample 1 of 64' in body
        assert "3 step indexes" in srv.stdout()


def test_console_script_help_lists_the_visualize_flags() -> None:
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), "--help"],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    for flag in ("DATA_DIR", "--port", "--host", "--cache-memory", "--cache-entries",
                 "--base-path", "--tui", "--mask-str"):  # fmt: skip
        assert flag in result.stdout


def test_console_script_bad_data_dir_is_a_one_line_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), str(tmp_path / "missing")],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"CommandError: DATA_DIR {tmp_path / 'missing'} does not exist"
    ]


def test_wheel_carries_templates_static_files_the_script_and_its_metadata(tmp_path: Path) -> None:
    """What `pip install relax-rollout-viewer` gets, built as pip builds it (in isolation,
    from a copy: a build writes build/ and egg-info/ next to its sources)."""
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path),
         str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("relax_rollout_viewer-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    static = REPO_ROOT / "rollouts" / "static"
    templates = REPO_ROOT / "rollouts" / "templates"
    shipped = [p for p in (*static.rglob("*"), *templates.rglob("*")) if p.is_file()]
    assert shipped
    for path in shipped:
        assert path.relative_to(REPO_ROOT).as_posix() in names
    assert "relax_site/settings.py" in names
    assert "relax_site/cli.py" in names
    assert "relax-viewer = relax_site.cli:main" in scripts
    # The terminal UI's stylesheet (textual reads it at start), and the typing marker.
    assert "rollouts/tui/app.tcss" in names
    assert "rollouts/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert b"License-Expression: MIT" in metadata
    assert b"Classifier: Typing :: Typed" in metadata
