"""The verbose table stable-baselines3 prints after each PPO update (its `HumanOutputFormat`)."""

from __future__ import annotations

from collections.abc import Mapping


def _value_text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:<8.3g}".rstrip()  # SB3's format for floats
    return str(value)


def format_table(values: Mapping[str, object]) -> str:
    """`values` keyed `section/name` as SB3 prints them: sections sorted, names indented.

    ```
    ------------------------------
    | rollout/         |         |
    |    ep_rew_mean   | 0.52    |
    ------------------------------
    ```
    """
    sections: dict[str, list[tuple[str, str]]] = {}
    for key, value in sorted(values.items()):
        section, _, name = key.rpartition("/")
        sections.setdefault(section, []).append((name, _value_text(value)))
    rows: list[tuple[str, str]] = []
    for section, items in sections.items():
        if section:
            rows.append((f"{section}/", ""))
        rows += [(f"   {name}" if section else name, text) for name, text in items]
    key_width = max(len(k) for k, _ in rows)
    value_width = max(len(v) for _, v in rows)
    border = "-" * (key_width + value_width + 7)
    lines = [border]
    lines += [
        f"| {k}{' ' * (key_width - len(k))} | {v}{' ' * (value_width - len(v))} |" for k, v in rows
    ]
    lines.append(border)
    return "\n".join(lines)
