"""The dashboard: server-rendered pages under ``/ui/`` over the same service functions as
the JSON API.

Everything it needs ships in this package: Jinja2 templates (``templates/``), a small
stylesheet and script (``static/``).
"""

from __future__ import annotations

from fastapi import FastAPI

from app.ui.routes import install_pages


def install(app: FastAPI) -> None:
    """Add the dashboard to the service's app."""
    install_pages(app)


__all__ = ["install"]
