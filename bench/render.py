"""Rewrite BENCHMARKS.md sections from the newest JSON of each benchmark in bench/results/
(without running anything), then the verdict.

    python bench/render.py [NAME ...]
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

NAMES = ("vs_sysbench", "vs_ycsb", "generator_cost", "hot_path_patches", "threads_per_shard", "fanout_scaling", "aggregation_cost")


def main(names):
    for name in names or NAMES:
        files = sorted(C.RESULTS.glob(f"{name}-*.json"))
        if files:
            data = json.loads(files[-1].read_text())
            C.update_section(name, importlib.import_module(f"bench.{name}").markdown(data))
    importlib.import_module("bench.verdict").main()


if __name__ == "__main__":
    main(sys.argv[1:])
