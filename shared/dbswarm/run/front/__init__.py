"""The front ends of a campaign: what a user or a client calls (the API, the remote commands,
resume, the TPC-C check command, the indexed path's and Kubernetes' commands)."""
