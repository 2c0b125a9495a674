"""Benchmarks (scripts, not tests): importable so other benchmarks can reuse the synthetic surface."""
