"""The runtimes of a campaign: the steps as functions of small JSON events (service), the local
runner and its state-machine emulator, the indexed worker, interrupt, the platform context and
the SAM template."""
