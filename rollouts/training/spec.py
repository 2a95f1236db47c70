"""The job spec (TOML): how to run a training command, its typed fields, presets and metrics.

`Spec.schema()` is what `GET api/train/schema` serves and `Spec.validate()` is what the server
checks against: both read the same `Field`s, so the form and the check cannot disagree.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

TYPES = ("int", "float", "bool", "string", "choice", "path")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
BUILTIN = ("job_id", "run_dir", "control_file", "python", "resume_path")
# What no text value may hold: C0 and C1 controls (DEL too); the bidirectional embeddings,
# overrides and isolates, which make text read otherwise than it runs; lone surrogates, which
# are not text (no argv can carry them).
UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
INT_RANGE = (-(2**63), 2**63 - 1)  # an int field's values: what a child holds in 64 bits
DEFAULT_GRACE = 15.0


class SpecError(ValueError):
    """The spec file is unusable; the message says where, on one line (whatever the spec
    holds, a newline or a terminal escape in a key it quotes is shown escaped)."""

    def __init__(self, message: str) -> None:
        super().__init__(UNSAFE_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", message))


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    default: Any
    label: str
    help: str = ""
    group: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices) or None,
            "help": self.help,
            "group": self.group,
            "label": self.label,
        }

    def check(self, value: Any) -> tuple[Any, str | None]:
        """The value as the field's type, or an error message."""
        if self.type == "bool":
            return (value, None) if isinstance(value, bool) else (None, "must be true or false")
        if self.type in ("int", "float"):
            number, why = _number(value, self.type == "int")
            if number is None:
                return None, why
            # (exact comparisons: an int of 400 digits against a float bound cannot overflow)
            if self.min is not None and number < self.min:
                return None, f"must be at least {_plain(self.min)}"
            if self.max is not None and number > self.max:
                return None, f"must be at most {_plain(self.max)}"
            if self.type == "int" and not INT_RANGE[0] <= number <= INT_RANGE[1]:
                return None, f"must be between {INT_RANGE[0]} and {INT_RANGE[1]} (64 bits)"
            return number, None
        if not isinstance(value, str):
            return None, "must be text"
        error = text_problem(value)
        if error is not None:
            return None, error
        if self.type == "choice" and value not in self.choices:
            return None, f"must be one of {', '.join(self.choices)}"
        if self.type == "path":
            pure = PurePosixPath(value)
            if not value or pure.is_absolute() or ".." in pure.parts or "\\" in value:
                return None, "must be a relative path inside the spec's directory"
            if value.startswith("-"):
                return None, f"{OPTION_LIKE} (start it with ./)"
        return value, None


OPTION_LIKE = "may not begin with '-': the command would read it as an option"


def text_problem(text: str) -> str | None:
    """Why `text` cannot be a value (a character in UNSAFE_CHARS, named), or None."""
    found = UNSAFE_CHARS.search(text)
    if found is None:
        return None
    code = ord(found.group())
    if 0xD800 <= code <= 0xDFFF:
        kind = "a lone surrogate"
    elif code >= 0x202A:
        kind = "a bidirectional control"
    else:
        kind = "a control character"
    return f"may not contain {kind} (U+{code:04X})"


def _plain(bound: float) -> str:
    """A bound as a person writes it: 1000000, 0, 0.05 (never 1e+06)."""
    if isinstance(bound, int):
        return str(bound)
    return str(int(bound)) if bound.is_integer() else repr(bound)


def _number(value: Any, integer: bool) -> tuple[int | float | None, str]:
    """(the value as the field's number, "") or (None, why not)."""
    if isinstance(value, str):
        value = _parsed(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, "must be a whole number" if integer else "must be a number"
    if integer:
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            return None, "must be a whole number"
        return int(value), ""
    try:
        number = float(value)  # (OverflowError: an int of 309 digits or more)
    except OverflowError:
        number = math.inf
    return (number, "") if math.isfinite(number) else (None, "must be a finite number")


def _parsed(text: str) -> int | float | None:
    try:
        return int(text)  # exactly (a float would round 12345678901234567891)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class Spec:
    path: Path  # the spec file; the child runs in its directory
    name: str
    command: tuple[Any, ...]  # strings, or {"when": <bool field>, "args": [...]}
    run_dir: str = "runs/{job_id}"
    rollout_result: str = "rollout_result"
    checkpoints: str = "checkpoints"
    resume_file: str = "resume.json"
    episodes: str | None = None
    tensorboard: str | None = None  # the job's TensorBoard directory, inside its run directory
    honours_control: bool = True
    grace_seconds: float = DEFAULT_GRACE
    resume_args: tuple[str, ...] = ()
    device: str = "cpu"
    fields: tuple[Field, ...] = ()
    groups: tuple[dict[str, str], ...] = ()
    presets: tuple[dict[str, Any], ...] = ()
    metrics: tuple[dict[str, Any], ...] = ()
    main_metric: str = "ep_rew_mean"
    # The field holding the run's target in timesteps (SB3's learn(total_timesteps)): the
    # progress total when no progress JSON says it; for a resume, counted from the checkpoint.
    total_field: str = "total_timesteps"
    extra: dict[str, Any] = field(default_factory=dict)
    backend: str = "local"  # or "ray": submitted as a Ray job (`backends/rayjob.py`)
    ray: dict[str, Any] = field(default_factory=dict)  # address, working_dir, env ([ray])

    @property
    def base(self) -> Path:
        return self.path.parent

    def runs_root(self) -> Path:
        """The directory holding every job's run directory (the run_dir before `{job_id}`)."""
        head = self.run_dir.split("{job_id}", 1)[0].rstrip("/")
        return (self.base / head).resolve() if head else self.base.resolve()

    def total_of(self, values: dict[str, Any]) -> int | None:
        """The target of a job run with `values`: its `total_field`'s value, if a whole number."""
        value = values.get(self.total_field)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return None
        return int(value)

    def defaults(self) -> dict[str, Any]:
        return {f.name: f.default for f in self.fields}

    def validate(
        self, values: Any, base: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """(the complete values, {field: message}); missing fields take `base`, then defaults."""
        if not isinstance(values, dict):
            return {}, {"values": "must be an object of field values"}
        known = {f.name: f for f in self.fields}
        errors = {name: "no such field" for name in values if name not in known}
        clean = {**self.defaults(), **(base or {})}
        for name, value in values.items():
            if name in known:
                checked, error = known[name].check(value)
                if error is None:
                    clean[name] = checked
                else:
                    errors[name] = error
        for name in self.leading_fields():
            value = clean.get(name)
            if known[name].type == "string" and str(value).startswith("-"):
                errors.setdefault(name, f"{OPTION_LIKE} (it begins an argument)")
        return clean, errors

    def leading_fields(self) -> set[str]:
        """The fields whose value begins an argument of the command (`"{name}"`,
        `"{name}.txt"`): there a value `--help` would be an option of the child, not a value
        (`"--name={name}"` is safe: the argument begins with the spec's own text)."""
        templates = [*self.resume_args]
        for item in self.command:
            templates += item["args"] if isinstance(item, dict) else [item]
        known = {f.name for f in self.fields}
        return {m.group(1) for t in templates if (m := PLACEHOLDER.match(t))} & known

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "fields": [f.as_json() for f in self.fields],
            "groups": list(self.groups),
            "presets": list(self.presets),
            "metrics": list(self.metrics),
            "grace_seconds": self.grace_seconds,
            "resumable": bool(self.resume_args),
            "backend": self.backend,
        }

    def command_for(self, values: dict[str, Any], builtins: dict[str, str]) -> list[str]:
        """The argument list (never a shell string), placeholders filled in."""
        names = {**{k: _text(v) for k, v in values.items()}, **builtins}
        args: list[str] = []
        for item in self.command:
            if isinstance(item, dict):
                if values.get(item["when"]) is True:
                    args += [fill(a, names) for a in item["args"]]
            else:
                args.append(fill(item, names))
        if "resume_path" in builtins:
            args += [fill(a, names) for a in self.resume_args]
        return args


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def fill(template: str, names: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda m: names[m.group(1)], template)


def python() -> str:
    return sys.executable
