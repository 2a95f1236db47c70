"""The viewer as a user installs it: the `relax-viewer` console script and the built wheel."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from rollouts.demo import write_demo
from tests.support.servers import REPO_ROOT, child_env, free_port, request, run_visualize

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


def relax_viewer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


DJANGO_OPTIONS = ("--pythonpath", "--traceback", "--verbosity", "--settings", "--no-color")


def test_console_script_help_names_its_two_commands() -> None:
    result = relax_viewer("--help")
    assert result.returncode == 0 and result.stderr == ""
    assert "  visualize DATA_DIR " in result.stdout and "  train SPEC.toml " in result.stdout
    assert "relax-viewer DATA_DIR is short for relax-viewer visualize DATA_DIR" in result.stdout
    bare = relax_viewer()  # a usage error: the same help, where errors go
    assert bare.returncode == 2 and bare.stdout == "" and bare.stderr == result.stdout


def test_console_script_helps_list_only_each_commands_own_flags() -> None:
    viewer = relax_viewer("visualize", "--help")
    assert viewer.returncode == 0
    assert viewer.stdout.startswith("usage: relax-viewer visualize ")
    for flag in ("DATA_DIR", "--port", "--host", "--cache-memory", "--cache-entries",
                 "--base-path", "--tui", "--mask-str"):  # fmt: skip
        assert flag in viewer.stdout
    train = relax_viewer("train", "--help")
    assert train.returncode == 0
    assert train.stdout.startswith("usage: relax-viewer train ")
    assert "--backend" in train.stdout and "SPEC.toml" in train.stdout
    assert "DATA_DIR" not in train.stdout
    for shown in (viewer.stdout, train.stdout):
        assert not [option for option in DJANGO_OPTIONS if option in shown]


def test_console_script_train_without_a_spec_is_a_usage_error() -> None:
    result = relax_viewer("train")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "relax-viewer train: error: the following arguments are required: SPEC.toml"
    )


def test_console_script_bad_data_dir_is_a_one_line_error(tmp_path: Path) -> None:
    result = relax_viewer(str(tmp_path / "missing"))
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"CommandError: DATA_DIR {tmp_path / 'missing'} does not exist"
    ]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `pip install relax-rollout-viewer` gets, built as pip builds it (in isolation,
    from a copy: a build writes build/ and egg-info/ next to its sources)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
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
    (found,) = tmp_path.glob("relax_rollout_viewer-*.whl")
    return found


def test_wheel_carries_templates_static_files_the_script_and_its_metadata(wheel: Path) -> None:
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
    assert "relax_site/gunicorn_conf.py" in names
    assert "relax-viewer = relax_site.cli:main" in scripts
    # The terminal UI's stylesheet (textual reads it at start), and the typing marker.
    assert "rollouts/tui/app.tcss" in names
    assert "rollouts/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert b"License-Expression: MIT" in metadata
    assert b"Classifier: Typing :: Typed" in metadata


@pytest.fixture(scope="module")
def wheel_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel (its dependencies come from ours, through a .pth line, so
    nothing is downloaded): what a user without a checkout has."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]
    (site,) = venv.glob("lib/python3*/site-packages")
    (ours,) = Path(sys.executable).parent.parent.glob("lib/python3*/site-packages")
    (site / "dependencies.pth").write_text(f"{ours}\n")  # appended after the venv's own
    return venv


def test_gunicorn_config_is_importable_from_a_venv_outside_the_checkout(
    wheel_venv: Path, tmp_path: Path, demo_dir: Path
) -> None:
    """The README's `gunicorn -c python:relax_site.gunicorn_conf relax_site.wsgi`, run where no
    checkout is: the wheel's venv, started in an empty directory."""
    python = wheel_venv / "bin" / "python"
    (site,) = wheel_venv.glob("lib/python3*/site-packages")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = child_env({"RELAX_DATA_DIR": str(demo_dir), "PORT": str(free_port())})
    env.pop("PYTHONPATH", None)
    where = subprocess.run(
        [str(python), "-c", "import relax_site.gunicorn_conf as c, rollouts; print(c.__file__,"
         " rollouts.__file__, c.bind[0])"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    conf_file, rollouts_file, bind = where.stdout.split()
    assert conf_file.startswith(str(site)) and rollouts_file.startswith(str(site))
    assert bind == f"127.0.0.1:{env['PORT']}"
    argv = [str(python), "-m", "gunicorn", "-c", "python:relax_site.gunicorn_conf",
            "relax_site.wsgi"]  # fmt: skip
    log = tmp_path / "gunicorn.log"  # a file, not a pipe: a full pipe would block the server
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, cwd=elsewhere, env=env, stdout=out, stderr=out, start_new_session=True
        )
    try:
        url = f"http://127.0.0.1:{env['PORT']}"
        deadline = time.monotonic() + 30
        while True:
            try:
                status, headers, body = request(url + "/train/11/")
                break
            except OSError:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "gunicorn did not answer"
                time.sleep(0.1)
        assert status == 200 and b"Sample 1 of 64" in body
        status, headers, _ = request(url + "/static/rollouts/viewer.js")
        assert status == 200 and "javascript" in headers["content-type"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_installed_from_the_wheel_install_hints_name_the_extras_requirements(
    wheel_venv: Path, tmp_path: Path
) -> None:
    """No checkout to `pip install -e` in, and no index that has the package: the hint is the
    extra's own requirements, as the wheel's metadata (from pyproject.toml) states them."""
    env = child_env()
    env.pop("PYTHONPATH", None)
    shown = subprocess.run(
        [str(wheel_venv / "bin" / "python"), "-c",
         "from rollouts.tui import INSTALL_HINT; print(INSTALL_HINT)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    with (REPO_ROOT / "pyproject.toml").open("rb") as file:
        tui = tomllib.load(file)["project"]["optional-dependencies"]["tui"]
    quoted = re.findall(r'"([^"]+)"', shown.stdout.split(": pip install ", 1)[1])
    assert [Requirement(r) for r in quoted] == [Requirement(r) for r in tui]
    assert "checkout" not in shown.stdout and "/" not in shown.stdout
