"""The rule families of RULES.md, one module each. Importing this package registers them."""

from app.diff.rules import annotations_surface, fusion, input_schema, output_schema, prompts_resources, security

__all__ = ["annotations_surface", "fusion", "input_schema", "output_schema", "prompts_resources", "security"]
