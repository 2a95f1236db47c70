from __future__ import annotations

from django.apps import AppConfig


class RolloutsConfig(AppConfig):
    name = "rollouts"
    verbose_name = "Relax Rollout Viewer"

    def ready(self) -> None:
        from . import checks  # noqa: F401 - registers the system checks
