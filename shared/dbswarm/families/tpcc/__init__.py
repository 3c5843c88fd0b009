"""TPC-C: the family, its SQL per dialect, and its consistency check."""
