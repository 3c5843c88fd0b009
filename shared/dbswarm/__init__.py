"""dbswarm: distributed database load campaigns (YCSB and sysbench methodology)."""
__version__ = "0.1.0"
