"""WSGI entry point: `gunicorn relax_site.wsgi`, configured by RELAX_* environment variables."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "relax_site.settings")

application = get_wsgi_application()
