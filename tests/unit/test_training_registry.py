"""The training backends' registry and contract: every registered class supplies each hook of
`Backend` with the protocol's own signature, an unknown backend name is refused with the known
ones, and choosing the local backend never imports Ray."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from rollouts.training.backends import BACKENDS, Backend, backend_for, unavailable
from rollouts.training.job import Job
from rollouts.training.spec import SpecError
from tests.support.servers import REPO_ROOT

HOOKS = sorted(
    name for name, value in vars(Backend).items() if inspect.isfunction(value) and name[0] != "_"
)
ATTRIBUTES = sorted(Backend.__annotations__)


def test_the_protocol_states_the_hooks_job_calls():
    assert HOOKS == [
        "alive",
        "await_end",
        "ended_unseen",
        "force",
        "launch",
        "stop_without_control",
    ]
    assert ATTRIBUTES == ["backend", "forced_means", "merged_output"]


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_each_registered_backend_keeps_the_contract(name: str):
    cls = backend_for(name)
    assert issubclass(cls, Job)
    assert cls.backend == name  # the name its records carry is the one it is registered under
    for attribute in ATTRIBUTES:
        expected = Backend.__annotations__[attribute]
        assert type(getattr(cls, attribute)).__name__ == expected, f"{name}: {attribute}"
    for hook in HOOKS:
        method = getattr(cls, hook)
        assert inspect.signature(method) == inspect.signature(getattr(Backend, hook)), (
            f"{name}.{hook} does not take and return what Backend.{hook} says"
        )
        if getattr(Job, hook) is not Job.ended_unseen:  # the one hook with a default
            assert method is not getattr(Job, hook), f"{name} does not supply {hook}"


def test_a_signature_unlike_the_protocols_is_seen():
    """The check above can fail: a hook taking an argument the protocol does not give it."""

    class Wrong(Job):
        def force(self, how: str) -> str:  # type: ignore[override]
            return how

    assert inspect.signature(Wrong.force) != inspect.signature(Backend.force)


def test_an_unknown_backend_is_refused_naming_the_known_ones():
    with pytest.raises(SpecError) as refused:
        backend_for("slurm")
    said = str(refused.value)
    assert "slurm" in said and "local, ray" in said


def test_the_local_backend_is_always_available():
    assert unavailable("local") is None


def printed_by(program: str) -> list[str]:
    """What a fresh interpreter prints (a module imported here would be in every answer)."""
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.split()


def test_choosing_the_local_backend_never_imports_ray():
    shown = printed_by(
        "import rollouts.training.backends as b; b.backend_for('local');"
        " import sys; print('ray' in sys.modules, 'rollouts.training.backends.rayjob' in"
        " sys.modules)"
    )
    assert shown == ["False", "False"]


def test_the_ray_backend_loads_without_importing_ray_itself():
    """Its job class is a module of this package; Ray is imported when the first call is made."""
    shown = printed_by(
        "import rollouts.training.backends as b; b.backend_for('ray');"
        " import sys; print('ray' in sys.modules)"
    )
    assert shown == ["False"]
