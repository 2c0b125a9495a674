"""Readers for every input format; :mod:`app.ingest.load` picks the right one."""
