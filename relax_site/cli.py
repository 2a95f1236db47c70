"""`relax-viewer COMMAND [flags]`: `manage.py visualize` and `manage.py train` for a pip-installed
viewer, no checkout.

Same flags, same output, same exit codes: it runs the command of the standalone project
(`relax_site.settings`, configured by the RELAX_* environment variables), named as typed, so a
usage line reads `relax-viewer visualize ...` or `relax-viewer train ...`. A first argument
that is not a command is a data directory: `relax-viewer DATA_DIR` is short for
`relax-viewer visualize DATA_DIR`, the spelling users and the docs had before `train` existed.
"""

from __future__ import annotations

import os
import sys

PROG = "relax-viewer"
COMMANDS = ("visualize", "train")
# Written out rather than built with argparse: the DATA_DIR shorthand is no subcommand, and the
# commands' own parsers (Django's) only exist once settings are loaded, which --help need not do.
TOP_HELP = f"""\
usage: {PROG} [-h] COMMAND [flags]
       {PROG} DATA_DIR [flags]

commands:
  visualize DATA_DIR   serve the viewer for a run's rollout_result/ (or several runs)
  train SPEC.toml      host a training run with the viewer: start, watch, pause, stop

{PROG} DATA_DIR is short for {PROG} visualize DATA_DIR.
{PROG} COMMAND --help shows a command's flags; {PROG} --version the installed version.
"""


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        # Nothing asked for is a usage error, as argparse makes it: the help, on stderr, status 2.
        sys.stderr.write(TOP_HELP)
        raise SystemExit(2)
    if args in (["-h"], ["--help"]):
        sys.stdout.write(TOP_HELP)
        return
    command, rest = (args[0], args[1:]) if args[0] in COMMANDS else ("visualize", args)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "relax_site.settings")
    from django.core.management import ManagementUtility

    # Always the command's name second: otherwise `relax-viewer --help` would be Django's list
    # of every command, and the usage line would not say which command it is.
    ManagementUtility([PROG, command, *rest]).execute()


if __name__ == "__main__":
    main()
