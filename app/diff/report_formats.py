"""The report formats, kept apart from the renderers so ``--help`` can list them without
loading any of them (or the diff model)."""

FORMATS = ("text", "json", "markdown", "sarif", "junit", "github")

__all__ = ["FORMATS"]
