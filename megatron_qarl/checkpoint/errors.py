"""The one error type of the checkpoint tools: every message names the file, the tensor and
the fix, so a user with a broken download or a wrong directory knows what to do."""


class CheckpointError(ValueError):
    """A checkpoint is missing, incomplete, corrupt or of another model."""
