"""`relax-viewer`: which command an argument list runs, and helps that show only our flags.

In process: `main` is what the console script calls. Arguments that would start a server name a
directory that does not exist, so the command stops at its first check, saying which it was.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from django.core.management import load_command_class

from relax_site.cli import main
from tests.support.servers import REPO_ROOT

SPEC = REPO_ROOT / "examples" / "demo-train.toml"
DJANGO_OPTIONS = ("--version", "--verbosity", "-v ", "--settings", "--pythonpath", "--traceback",
                  "--no-color", "--force-color", "--skip-checks")  # fmt: skip
VISUALIZE_FLAGS = ("DATA_DIR", "--port", "--host", "--cache-memory", "--cache-entries",
                   "--base-path", "--tui", "--mask-str", "--tensorboard")  # fmt: skip
TRAIN_FLAGS = ("SPEC.toml", "--port", "--no-browser", "--print-schema", "--backend",
               "--ray-address")  # fmt: skip


def exit_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int | str | None, str, str]:
    """(exit status, stdout, stderr) of `relax-viewer ARGV` that ends by SystemExit."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out, err = capsys.readouterr()
    return exited.value.code, out, err


def test_help_names_both_commands_and_the_data_dir_shorthand(capsys):
    for flag in ("--help", "-h"):
        main([flag])
        out, err = capsys.readouterr()
        assert err == ""
        assert "  visualize DATA_DIR " in out and "  train SPEC.toml " in out
        assert "relax-viewer DATA_DIR is short for relax-viewer visualize DATA_DIR" in out
        assert "relax-viewer COMMAND --help shows a command's flags" in out
        assert not any(option in out for option in DJANGO_OPTIONS[1:])


def test_no_arguments_is_a_usage_error_with_the_help_on_stderr(capsys):
    status, out, err = exit_of(capsys)
    assert status == 2 and out == ""
    assert err.startswith("usage: relax-viewer [-h] COMMAND") and "train SPEC.toml" in err


@pytest.mark.parametrize("argv", [["visualize", "--help"], ["--help", "some-dir"]])
def test_visualize_help_shows_only_the_viewers_flags(capsys, argv):
    status, out, _ = exit_of(capsys, *argv)
    assert status == 0
    assert out.startswith("usage: relax-viewer visualize [-h] [--port PORT]")
    assert all(flag in out for flag in VISUALIZE_FLAGS)
    assert not any(option in out for option in DJANGO_OPTIONS)


def test_train_help_is_trains_own(capsys):
    status, out, _ = exit_of(capsys, "train", "--help")
    assert status == 0
    assert out.startswith("usage: relax-viewer train [-h]")
    assert all(flag in out for flag in TRAIN_FLAGS)
    assert "DATA_DIR" not in out
    assert not any(option in out for option in DJANGO_OPTIONS)


def test_train_alone_says_its_spec_is_required(capsys):
    status, out, err = exit_of(capsys, "train")
    assert status == 2 and out == ""
    assert err.startswith("usage: relax-viewer train ")
    assert err.endswith(
        "relax-viewer train: error: the following arguments are required: SPEC.toml\n"
    )


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["visualize", "train"], "train"),  # a directory that is called train
        (["./train"], "./train"),
        (["--port", "9", "missing"], "missing"),  # a flag first is still the viewer's
        (["missing", "--port", "9"], "missing"),
    ],
)
def test_anything_but_a_command_name_first_is_the_viewer(
    capsys, monkeypatch, tmp_path, argv, named
):
    monkeypatch.chdir(tmp_path)
    status, _, err = exit_of(capsys, *argv)
    assert status == 1
    assert err == f"CommandError: DATA_DIR {named} does not exist\n"


def test_djangos_options_are_hidden_but_still_accepted(capsys, monkeypatch):
    # --settings and --pythonpath change the process (the environment, sys.path): restored after.
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tests.settings")
    monkeypatch.setattr(sys, "path", list(sys.path))
    main(["train", str(SPEC), "--settings", "tests.settings", "--pythonpath", str(REPO_ROOT),
          "-v", "0", "--traceback", "--no-color", "--print-schema"])  # fmt: skip
    assert json.loads(capsys.readouterr().out)["name"]
    status, out, _ = exit_of(capsys, "train", "--version")
    assert status == 0 and out.strip() == version("relax-rollout-viewer")  # not Django's


@pytest.mark.parametrize("name", ["visualize", "train"])
def test_manage_py_helps_show_only_our_flags_too(name):
    command = load_command_class("rollouts", name)
    parser = command.create_parser("manage.py", name)
    shown = parser.format_help()
    assert shown.startswith(f"usage: manage.py {name} [-h]")
    assert not any(option in shown for option in DJANGO_OPTIONS)
    # Hidden from the help, still parsed: what the options are there for.
    parsed = parser.parse_args(
        [str(Path("x")), "--settings", "s", "--pythonpath", "p", "-v", "2", "--traceback"]
    )
    assert (parsed.settings, parsed.pythonpath, parsed.verbosity, parsed.traceback) == (
        "s", "p", 2, True,
    )  # fmt: skip
