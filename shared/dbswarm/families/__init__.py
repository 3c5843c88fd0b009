"""Workload families (YCSB, sysbench, TPC-C) as plugins; base holds the protocol and the registry."""
