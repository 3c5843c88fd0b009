"""Running a campaign, in two parts: the front ends (``front``: the API, the remote commands,
resume, the TPC-C check command, the indexed path's and Kubernetes' commands) and the runtimes
they start or call (``runtime``: the campaign steps, the local runner and its state-machine
emulator, the indexed worker, interrupt, the platform context, the SAM template)."""
