"""Front ends and runtimes: the campaign steps (service), the local runner and its state-machine emulator,
interrupt and resume, the remote CLI and the API, the platform context, the SAM template."""
