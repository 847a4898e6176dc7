"""The one error type of the checkpoint tools: every message names the file, the tensor and
the fix, so a user with a broken download or a wrong directory knows what to do."""


class CheckpointError(ValueError):
    """A checkpoint is missing, incomplete, corrupt or of another model."""


def first_failure(err: BaseException) -> str:
    """The first rank's own exception inside torch DCP's CheckpointException, in one line."""
    failures = getattr(err, "failures", None)
    if failures:
        err = next(iter(failures.values()))[0]
    text = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {text}"
