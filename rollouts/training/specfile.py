"""Reading a job spec from its TOML file, refusing anything the runner could not honour."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from .backends import check_backend, ray_options
from .spec import BUILTIN, DEFAULT_GRACE, PLACEHOLDER, TYPES, Field, Spec, SpecError


def load_spec(path: str | Path) -> Spec:
    """The spec in `path`; SpecError (naming the problem, not the server path) when unusable."""
    spec_path = Path(path).expanduser().resolve()
    try:
        raw = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read the spec {spec_path.name}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"{spec_path.name} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise SpecError(f"{spec_path.name} is nested too deeply to be a job spec") from None
    return parse_spec(raw, spec_path)


def parse_spec(raw: dict[str, Any], spec_path: Path) -> Spec:
    job = raw.get("job")
    if not isinstance(job, dict):
        raise SpecError("the spec needs a [job] table")
    fields = tuple(_field(item, n) for n, item in enumerate(_list(raw, "fields")))
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        raise SpecError("two fields have the same name")
    clash = set(names) & set(BUILTIN)
    if clash:
        raise SpecError(f"field names {sorted(clash)} are reserved placeholders")
    command = job.get("command")
    if not isinstance(command, list) or not command:
        raise SpecError("[job] command must be a non-empty list of arguments")
    allowed = set(names) | set(BUILTIN) - {"resume_path"}
    for item in command:
        if isinstance(item, dict):
            if item.get("when") not in [f.name for f in fields if f.type == "bool"]:
                raise SpecError("a conditional argument needs 'when' naming a bool field")
            if not isinstance(item.get("args"), list):
                raise SpecError("a conditional argument needs 'args', a list")
            _placeholders(item["args"], allowed)
        else:
            _placeholders([item], allowed)
    resume_args = job.get("resume_args", [])
    _placeholders(resume_args, allowed | {"resume_path"}, "resume_args")
    run_dir = _relative(job.get("run_dir", "runs/{job_id}"), "run_dir")
    if "{job_id}" not in run_dir:
        raise SpecError("[job] run_dir must contain {job_id}")
    if set(PLACEHOLDER.findall(run_dir)) - {"job_id"}:
        raise SpecError("[job] run_dir may use only the {job_id} placeholder")
    grace = job.get("grace_seconds", DEFAULT_GRACE)
    if isinstance(grace, bool) or not isinstance(grace, int | float) or not 0 < grace <= 3600:
        raise SpecError("[job] grace_seconds must be a number of seconds (0-3600]")
    spec = Spec(
        path=spec_path,
        name=str(job.get("name", spec_path.stem)),
        command=tuple(command),
        run_dir=run_dir,
        rollout_result=_relative(job.get("rollout_result", "rollout_result"), "rollout_result"),
        checkpoints=_relative(job.get("checkpoints", "checkpoints"), "checkpoints"),
        resume_file=_relative(job.get("resume_file", "resume.json"), "resume_file"),
        episodes=_relative(job["episodes"], "episodes") if job.get("episodes") else None,
        tensorboard=_relative(job["tensorboard"], "tensorboard") if "tensorboard" in job else None,
        honours_control=bool(job.get("control", True)),
        grace_seconds=float(grace),
        resume_args=tuple(resume_args),
        device=str(job.get("device", "cpu")),
        fields=fields,
        groups=tuple(_group(g) for g in _list(raw, "groups")),
        presets=tuple(_preset(p) for p in _list(raw, "presets")),
        metrics=tuple(_metric(m) for m in _list(raw, "metrics")),
        main_metric=str(job.get("main_metric", "ep_rew_mean")),
        total_field=_total_field(job.get("total_field", "total_timesteps"), fields),
        backend=check_backend(job.get("backend", "local")),
        ray=ray_options(raw.get("ray")),
    )
    for preset in spec.presets:
        _, errors = spec.validate(preset["values"])
        if errors:
            raise SpecError(f"preset {preset['name']!r} is invalid: {errors}")
    _, errors = spec.validate({})
    if errors:
        raise SpecError(f"the defaults are invalid: {errors}")
    return spec


def _total_field(name: Any, fields: tuple[Field, ...]) -> str:
    if not isinstance(name, str):
        raise SpecError("[job] total_field must name a field")
    if name != "total_timesteps" and name not in {f.name for f in fields if f.type == "int"}:
        raise SpecError(f"[job] total_field {name!r} must name an int field")
    return name


def _list(raw: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = raw.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise SpecError(f"[[{key}]] must be an array of tables")
    return [dict(i) for i in items]


def _placeholders(args: Any, allowed: set[str], where: str = "command") -> None:
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise SpecError(f"[job] {where} must be a list of strings")
    for arg in args:
        for name in PLACEHOLDER.findall(arg):
            if name not in allowed:
                raise SpecError(f"[job] {where} uses an unknown placeholder {{{name}}}")


def _relative(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise SpecError(f"[job] {key} must be a relative path")
    pure = PurePosixPath(value)
    if pure.is_absolute() or ".." in pure.parts:
        raise SpecError(f"[job] {key} must be relative and stay inside (no '..')")
    return value


def _field(item: dict[str, Any], n: int) -> Field:
    name, kind = item.get("name"), item.get("type")
    if not isinstance(name, str) or not name.isidentifier():
        raise SpecError(f"field #{n + 1} needs a name (letters, digits, _)")
    if kind not in TYPES:
        raise SpecError(f"field {name}: type must be one of {', '.join(TYPES)}")
    choices = item.get("choices", [])
    if not isinstance(choices, list) or (kind == "choice" and not choices):
        raise SpecError(f"field {name}: choices must be a list (a choice needs some)")
    if "default" not in item:
        raise SpecError(f"field {name} needs a default")
    bounds = {k: item.get(k) for k in ("min", "max")}
    for key, bound in bounds.items():
        if bound is not None and not _finite(bound):
            raise SpecError(f"field {name}: {key} must be a finite number")
    low, high = bounds["min"], bounds["max"]
    if low is not None and high is not None and low > high:
        raise SpecError(f"field {name}: min is above max")
    result = Field(
        name=name,
        type=kind,
        default=item["default"],
        label=str(item.get("label", name.replace("_", " "))),
        help=str(item.get("help", "")),
        group=str(item.get("group", "")),
        min=bounds["min"],
        max=bounds["max"],
        choices=tuple(str(c) for c in choices),
    )
    default, error = result.check(item["default"])
    if error:
        raise SpecError(f"field {name}: the default {error}")
    return Field(**{**result.__dict__, "default": default})


def _preset(item: dict[str, Any]) -> dict[str, Any]:
    """A preset as the schema serves it: its name, label and values, nothing else it holds."""
    if not isinstance(item.get("name"), str) or not isinstance(item.get("values"), dict):
        raise SpecError("each [[presets]] needs a name and a values table")
    label = str(item.get("label", item["name"]))
    return {"name": item["name"], "label": label, "values": dict(item["values"])}


def _group(item: dict[str, Any]) -> dict[str, str]:
    if not isinstance(item.get("name"), str):
        raise SpecError("each [[groups]] needs a name")
    return {"name": item["name"], "label": str(item.get("label", item["name"]))}


def _metric(item: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(item.get("key"), str):
        raise SpecError("each [[metrics]] needs a key")
    direction = item.get("direction", 0)
    if direction not in (1, -1, 0):
        raise SpecError(f"metric {item['key']}: direction must be 1, -1 or 0")
    lines = item.get("reference", [])
    if not isinstance(lines, list) or not all(_reference_line(r) for r in lines):
        raise SpecError(
            f"metric {item['key']}: each reference needs a finite numeric value, e.g. "
            '{ value = 0.05, label = "KL = 0.05" }'
        )
    reference = [{"value": float(r["value"]), "label": str(r.get("label", ""))} for r in lines]
    return {
        "key": item["key"],
        "label": str(item.get("label", item["key"])),
        "unit": str(item.get("unit", "")),
        "direction": direction,
        "reference": reference,
    }


def _reference_line(line: Any) -> bool:
    return _finite(line.get("value") if isinstance(line, dict) else None)


def _finite(value: Any) -> bool:
    """A number a bound or a line can be: no bool, no NaN or infinity (TOML has both), no
    integer beyond a float's range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
