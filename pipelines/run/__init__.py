"""A run's life: the runner, the context a protocol gets, the shared services, the step-mode gate, batches."""
