"""`relax-viewer DATA_DIR [flags]`: `manage.py visualize` for a pip-installed viewer, no checkout.

Same flags, same output, same exit codes: it runs the `visualize` command of the standalone
project (`relax_site.settings`, configured by the RELAX_* environment variables).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "relax_site.settings")
    from django.core.management import ManagementUtility

    args = sys.argv[1:] if argv is None else argv
    # "relax-viewer --help" shows visualize's help, not Django's list of commands.
    ManagementUtility(["relax-viewer", "visualize", *args]).execute()


if __name__ == "__main__":
    main()
