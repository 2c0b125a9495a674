"""The dashboard: server-rendered pages under ``/ui/`` over the same service functions as
the JSON API, and the offline API docs (``/docs``, ``/redoc``).

Everything it needs ships in this package: Jinja2 templates (``templates/``), a small
stylesheet and script, and the vendored Swagger UI and ReDoc files (``static/vendor/``).
"""

from __future__ import annotations

from fastapi import FastAPI

from app.ui.docs import install_docs
from app.ui.routes import install_pages


def install(app: FastAPI) -> None:
    """Add the dashboard and the offline docs to the service's app (create it with
    ``docs_url=None, redoc_url=None``: these replace FastAPI's CDN-loading pages)."""
    install_pages(app)
    install_docs(app)


__all__ = ["install"]
