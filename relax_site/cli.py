"""`relax-viewer DATA_DIR [flags]`: `manage.py visualize` for a pip-installed viewer, no checkout.

Same flags, same output, same exit codes: it runs the `visualize` command of the standalone
project (`relax_site.settings`, configured by the RELAX_* environment variables). Its usage
line reads `relax-viewer [-h] ...`, as it is typed; `relax-viewer visualize DATA_DIR` (the
manage.py spelling) works too. `relax-viewer train SPEC.toml [flags]` is `manage.py train`.
"""

from __future__ import annotations

import os
import sys

PROG = "relax-viewer"


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "relax_site.settings")
    from django.core.management import ManagementUtility

    from rollouts.management.commands import visualize

    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["train"] and args[1:2] and args[1].endswith(".toml"):
        # `relax-viewer train SPEC.toml [flags]`: host a training run (`manage.py train`).
        ManagementUtility([PROG, *args]).execute()
        return
    if args[:1] == ["visualize"] and not os.path.isdir("visualize"):
        args = args[1:]
    visualize.Command.prog = PROG  # the usage line as the user types it
    # "relax-viewer --help" shows visualize's help, not Django's list of commands.
    ManagementUtility([PROG, "visualize", *args]).execute()


if __name__ == "__main__":
    main()
