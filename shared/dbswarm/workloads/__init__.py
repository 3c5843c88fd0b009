"""Workloads as data: YCSB CoreWorkload and sysbench OLTP, plus their presets."""
