"""Benchmarks of tooldedup: stage microbenchmarks (``make bench``) and the HTTP load benchmark
(``python -m benchmarks.load``), with GPTCache measured beside it. Not part of the test run."""

__all__ = [
    "client",
    "corpus",
    "gptcache_server",
    "gptcache_store",
    "load",
    "preload",
    "report",
    "servers",
    "workload",
]
