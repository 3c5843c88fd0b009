"""The campaign: its file (spec), its plan into shards, the peak search, its cost, and what a deployment admits."""
