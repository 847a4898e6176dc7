"""Errors of the SGLang bridge. Each message names the server, the call and the fix."""


class SGLangError(RuntimeError):
    """Base class."""


class EngineUnavailable(SGLangError):
    """The server did not answer (refused, timed out, 5xx) after every retry."""


class EngineRequestError(SGLangError):
    """The server answered and refused the request (4xx or success=false): not retried."""


class PublishError(SGLangError):
    """No engine took the new weights; the message lists each engine's failure."""
