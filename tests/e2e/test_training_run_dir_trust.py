"""Issue 26, items 3, 4, 5 and 8, with real child processes: what a job or another user can
place in a run directory is data, never a destination. A symlinked `stdout.log` is not written
through (start, resume) nor read through (re-attach); a forged `job.json` gets no process
signalled (the viewer's own stop, its shutdown, `manage.py train`'s Ctrl+C); a child's output
without a newline costs the reading process a bounded amount of memory; and a forced stop ends
every process the job started, `setsid` grandchildren and double-forked daemons included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rollouts.training.backends.local import LocalJob
from rollouts.training.job import JobError
from rollouts.training.manager import Manager, stop_leftover
from rollouts.training.process import start_time
from rollouts.training.specfile import load_spec
from tests.support.servers import get_json, run_visualize
from tests.support.training import until, write_fake_spec

pytestmark = pytest.mark.e2e

DECOY = "the decoy's own bytes\n"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def state_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


# -- item 3: a symlinked log in a run directory


@pytest.mark.parametrize("name", ["stdout.log", "stderr.log"])
def test_a_resume_does_not_write_through_a_symlinked_log(tmp_path, name):
    manager = Manager(load_spec(write_fake_spec(tmp_path, grace=1.0)))
    job = manager.start({"mode": "crash", "crash_at": 3, "steps": 6})
    assert job.wait(20)
    decoy = tmp_path / "decoy.txt"
    decoy.write_text(DECOY)
    (job.run_dir / name).unlink()
    (job.run_dir / name).symlink_to(decoy)  # what a job (or another user) can leave there
    with pytest.raises(JobError) as refused:
        manager.start({"mode": "obey"}, resume_latest=True)
    assert str(refused.value) == (
        f"{name} in the run directory is a symbolic link: the viewer does not write it"
    )
    assert str(tmp_path) not in str(refused.value)
    time.sleep(0.3)
    assert decoy.read_text() == DECOY  # it grew 38 -> 3,368 bytes before
    assert manager.job is job and not job.running  # nothing started


@pytest.mark.parametrize("planted", ["symlink", "hard link"])
def test_a_start_into_a_run_directory_with_a_planted_log_writes_nothing_through_it(
    tmp_path, planted
):
    spec = load_spec(write_fake_spec(tmp_path))
    run_dir = tmp_path / "runs" / "planted"
    run_dir.mkdir(parents=True)
    decoy = tmp_path / "decoy.txt"
    decoy.write_text(DECOY)
    if planted == "symlink":
        (run_dir / "stdout.log").symlink_to(decoy)
    else:
        os.link(decoy, run_dir / "stdout.log")
    record = {"id": "planted", "run": "planted", "command": [sys.executable, "-c", "print(1)"]}
    with pytest.raises(JobError, match="the viewer does not write it"):
        LocalJob.start(spec, run_dir, record)
    assert decoy.read_text() == DECOY
    assert not (run_dir / "job.json").exists()


def test_a_re_attached_job_does_not_read_a_symlinked_log(tmp_path):
    spec = load_spec(write_fake_spec(tmp_path))
    first = Manager(spec).start({"mode": "obey", "steps": 2})
    assert first.wait(15)
    secret = tmp_path / "secret.txt"
    secret.write_text("a line the page must not show\n")
    (first.run_dir / "stdout.log").unlink()
    (first.run_dir / "stdout.log").symlink_to(secret)
    restarted = Manager(spec)  # a viewer restarted: it reads the run's logs again
    assert restarted.job is not None and restarted.job.wait(10)
    texts = [line["text"] for line in restarted.snapshot({"log_tail": 100})["log"]["lines"]]
    assert "a line the page must not show" not in texts
    assert "[viewer] stdout.log in the run directory is a symbolic link: the viewer does not" in (
        " ".join(texts)
    )


# -- item 4: a forged job.json


def forged_record(run: Path, victim: subprocess.Popen[bytes], forgery: str) -> dict[str, Any]:
    started = start_time(victim.pid)
    assert started is not None
    return {
        "id": run.name,
        "run": run.name,
        "command": ["python", "train.py"],
        "values": {},
        "pid": victim.pid,
        "pgid": victim.pid,
        "pid_start": started + (1 if forgery == "start time" else 0),
        # what a forger copies from a real record: a token, just not the victim's
        "pid_token": "0" * 32,
        "started_at": time.time() - 60,
        "status": "stopping" if forgery != "group" else "running",
        "stop_requested_at": time.time() - 60,  # a stop long past its grace: the force is due
        "exit_code": None,
        "force_killed": False,
        "paused_seconds": 0.0,
    }


@pytest.mark.parametrize(
    ("forgery", "why"),
    [
        ("token", "it is not the supervisor this viewer started (its token does not match)"),
        ("start time", "it started at another time than the recorded one (the pid was reused)"),
        ("group", "its process group is not the one recorded"),
    ],
)
def test_a_forged_record_gets_no_process_signalled(tmp_path, forgery, why):
    spec = load_spec(write_fake_spec(tmp_path, grace=0.2))
    # the victim: a harmless process of ours; its own group unless the forgery is the group
    victim = subprocess.Popen(["sleep", "60"], start_new_session=forgery != "group")
    try:
        run = tmp_path / "runs" / "20260101-000000"
        run.mkdir(parents=True)
        (run / "job.json").write_text(json.dumps(forged_record(run, victim, forgery)))
        stop_leftover(spec)  # what `train` does after its server
        manager = Manager(spec)
        assert manager.job is not None and manager.job.wait(5)
        manager.shutdown()  # what a viewer does when it shuts down
        with pytest.raises(JobError):
            manager.job.stop()
        job = manager.snapshot({})["job"]
        assert job["status"] == "exited" and not manager.job.running
        said = f"job.json names process {victim.pid}, but {why}: it was not signalled"
        assert job["message"] == said
        time.sleep(0.5)  # past the forged record's grace
        assert victim.poll() is None, "a process that is not the job's was killed"
        assert state_of(victim.pid) == "S", "a process that is not the job's was stopped"
    finally:
        victim.kill()
        victim.wait()


def test_train_s_ctrl_c_does_not_kill_the_process_a_forged_record_names(tmp_path):
    spec_path = write_fake_spec(tmp_path, grace=0.2)
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        run = tmp_path / "runs" / "20260101-000000"
        run.mkdir(parents=True)
        record = forged_record(run, victim, "token")
        record["status"] = "running"
        (run / "job.json").write_text(json.dumps(record))
        launcher = (sys.executable, "manage.py", "train")
        with run_visualize(spec_path, "--no-browser", launcher=launcher) as s:
            _, state = get_json(s.url("/api/train/state"))
            assert state["job"]["status"] == "exited"
            assert "it was not signalled" in state["job"]["message"]
            os.killpg(s.pid, signal.SIGINT)  # Ctrl+C: the job stopped first, then the server
            s.proc.wait(30)
        assert victim.poll() is None, "the viewer's shutdown killed a process not its job's"
    finally:
        victim.kill()
        victim.wait()


# -- item 5: output without a newline

WRITER = """
import sys
out = sys.stdout.buffer
for _ in range(int(sys.argv[1])):
    out.write(b"x" * (1 << 20))
out.write(b"\\nafter the long line\\n")
out.flush()
"""
WRITER_SPEC = """
[job]
command = ["{python}", "writer.py", "{mb}"]
[[fields]]
name = "mb"
type = "int"
default = 1
"""
# The process reading: a viewer's job core on its own, so its peak resident memory (VmHWM,
# reset once it is ready) is the reading's alone.
READER = """
import json, sys
from pathlib import Path
from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec

def figure(name):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(name))
    return int(line.split()[1]) * 1024

manager = Manager(load_spec(sys.argv[1]))
Path("/proc/self/clear_refs").write_text("5")  # VmHWM from here on
before = figure("VmRSS:")
job = manager.start({"mb": int(sys.argv[2])})
assert job.wait(120)
lines = manager.snapshot({"log_tail": 10})["log"]["lines"]
print(json.dumps({"growth": figure("VmHWM:") - before, "lines": [l["text"][:100] for l in lines]}))
"""
OUTPUT_MB = 64  # without a newline: the reader held +192 MB of it before the limit
GROWTH_BOUND = 50 << 20  # generous: the reader holds 64 KiB of a line and reads 1 MiB at a time


def test_output_without_a_newline_keeps_the_reader_s_memory_bounded(tmp_path):
    (tmp_path / "writer.py").write_text(WRITER)
    (tmp_path / "spec.toml").write_text(WRITER_SPEC)
    done = subprocess.run(
        [sys.executable, "-c", READER, str(tmp_path / "spec.toml"), str(OUTPUT_MB)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout)
    assert said["growth"] < GROWTH_BOUND, f"+{said['growth'] >> 20} MB"
    lines = said["lines"]
    assert lines[-3] == "x" * 100  # the line's first 64 KiB (the log shows its start)
    assert lines[-2].startswith("[viewer] the line above was longer than 64 KiB: cut there")
    assert lines[-1] == "after the long line"  # the next line is read as usual
    for log in tmp_path.glob("runs/*/stdout.log"):
        log.unlink()  # 20 MB need not stay in the temporary directory


# -- item 8: a forced stop ends every process the job started

FAMILY = """
import os, subprocess, sys, time
from pathlib import Path
SLEEP = "import os, time; os.setsid(); time.sleep(300)"
DAEMON = '''
import os, time
os.setsid()
if os.fork():
    os._exit(0)  # the daemon's parent exits: it is an orphan
print(os.getpid(), flush=True)
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 1)
os.dup2(null, 2)
time.sleep(300)
'''
grandchild = subprocess.Popen([sys.executable, "-c", SLEEP])  # setsid: out of the job's group
daemon = subprocess.run([sys.executable, "-c", DAEMON], capture_output=True, text=True)
Path("pids.json.part").write_text(f"[{grandchild.pid}, {daemon.stdout.strip()}]")
os.replace("pids.json.part", "pids.json")
print("family started", flush=True)
if sys.argv[1] == "exit":
    for _ in range(600):  # until the test has seen the family (at most a minute)
        if Path("go").exists():
            sys.exit(0)
        time.sleep(0.1)
time.sleep(300)  # and never reads the control file
"""
FAMILY_SPEC = """
[job]
command = ["{{python}}", "family.py", "{{mode}}"]
grace_seconds = 0.5
control = {control}
[[fields]]
name = "mode"
type = "choice"
choices = ["sleep", "exit"]
default = "sleep"
"""


def family_manager(tmp_path: Path, control: bool = True) -> Manager:
    (tmp_path / "family.py").write_text(FAMILY)
    spec = tmp_path / "spec.toml"
    spec.write_text(FAMILY_SPEC.format(control=str(control).lower()))
    return Manager(load_spec(spec))


def family_of(tmp_path: Path) -> list[int]:
    """The setsid grandchild and the daemon the family started."""
    pids_file = tmp_path / "pids.json"
    until(pids_file.exists, what="the family to start")
    pids = json.loads(pids_file.read_text())
    assert len(pids) == 2
    return [int(pid) for pid in pids]


def leave_nothing(job: Any, family: list[int]) -> None:
    """After a test, pass or fail: the processes it found killed, its job stopped."""
    for pid in family:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    if job.running:
        job.stop()
        job.wait(20)


def check_family(family: list[int], supervisor: int) -> None:
    """Both run out of the job's process group (once the grandchild's setsid has run): killing
    the group would miss them. The daemon's parent exited: the supervisor (a subreaper) adopted
    it, not init."""
    assert all(alive(pid) for pid in family)
    until(lambda: all(os.getpgid(pid) != supervisor for pid in family), what="setsid")
    ppid = int(Path(f"/proc/{family[1]}/stat").read_text().rpartition(")")[2].split()[1])
    assert ppid == supervisor


@pytest.mark.parametrize(
    ("how", "control", "status"),
    [
        ("forced stop", True, "killed"),  # the viewer kills the whole tree after the grace
        ("SIGTERM stop", False, "killed"),  # the child dies; its supervisor kills the rest
        ("the child exits", True, "exited"),  # what it left running is killed with it
    ],
)
def test_every_process_the_job_started_ends_with_it(tmp_path, how, control, status):
    manager = family_manager(tmp_path, control)
    job = manager.start({"mode": "exit" if how == "the child exits" else "sleep"})
    family: list[int] = []
    try:
        family = family_of(tmp_path)
        check_family(family, job.record["pid"])
        if how == "the child exits":
            (tmp_path / "go").touch()
        else:
            job.stop()
        assert job.wait(20)
        assert job.record["status"] == status
        until(lambda: not any(alive(pid) for pid in family), timeout=5, what="no process left")
    finally:
        leave_nothing(job, family)


def test_a_re_attached_viewer_s_forced_stop_ends_the_setsid_grandchildren(tmp_path):
    first = family_manager(tmp_path)
    job = first.start({"mode": "sleep"})
    family: list[int] = []
    try:
        family = family_of(tmp_path)
        check_family(family, job.record["pid"])
        restarted = Manager(first.spec)  # re-attaches through job.json, verified
        attached = restarted.job
        assert attached is not None and attached is not job and attached.running
        attached.stop()
        assert attached.wait(20)
        assert attached.record["force_killed"] is True and not attached.record.get("message")
        until(lambda: not any(alive(pid) for pid in family), timeout=5, what="no process left")
        assert job.wait(10)
    finally:
        leave_nothing(job, family)
