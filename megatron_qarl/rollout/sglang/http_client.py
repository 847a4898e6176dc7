"""JSON over HTTP to one SGLang server (stdlib only), with timeouts and retries.

Transport failures (refused connection, timeout, 5xx) are retried with exponential backoff
and end in EngineUnavailable; a 4xx or a `{"success": false}` body is the server refusing the
request and raises EngineRequestError at once. Non-idempotent calls pass retries=0.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Optional

from .errors import EngineRequestError, EngineUnavailable


#: the engines are reached directly: urlopen's default opener sent even loopback calls to an
#: http_proxy set in the environment (a cluster's), and blamed the engine's URL for the refusal
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class RetryPolicy:
    retries: int = 3
    backoff_s: float = 1.0  # doubles after each failed try
    max_backoff_s: float = 30.0

    def delays(self):
        delay = self.backoff_s
        for _ in range(self.retries):
            yield delay
            delay = min(2 * delay, self.max_backoff_s)


class EngineClient:
    """One server at `url` (e.g. http://10.0.0.2:30000)."""

    def __init__(self, url: str, timeout_s: float = 600.0, policy: Optional[RetryPolicy] = None):
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.policy = policy or RetryPolicy()

    def __repr__(self) -> str:
        return f"EngineClient({self.url})"

    def _once(self, method: str, path: str, body: Any, timeout_s: float) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with _OPENER.open(req, timeout=timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")[:500]
            if e.code >= 500:
                raise EngineUnavailable(f"{self.url}{path}: HTTP {e.code}: {detail}") from e
            raise EngineRequestError(f"{self.url}{path}: HTTP {e.code}: {detail}") from e
        # http.client.HTTPException: a server that died mid-answer (IncompleteRead)
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError,
                socket.timeout, TimeoutError) as e:
            raise EngineUnavailable(f"{self.url}{path}: {getattr(e, 'reason', None) or e!r}") \
                from e
        text = raw.decode(errors="replace")
        try:
            out = json.loads(text) if text.strip() else None
        except json.JSONDecodeError:
            return text  # /flush_cache answers plain text
        if isinstance(out, dict) and out.get("success") is False:
            raise EngineRequestError(f"{self.url}{path}: {out.get('message', out)}")
        return out

    def request(self, method: str, path: str, body: Any = None, *,
                timeout_s: Optional[float] = None, retries: Optional[int] = None) -> Any:
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        policy = self.policy if retries is None else RetryPolicy(retries, self.policy.backoff_s,
                                                                  self.policy.max_backoff_s)
        delays = policy.delays()
        while True:
            try:
                return self._once(method, path, body, timeout_s)
            except EngineUnavailable as e:
                delay = next(delays, None)
                if delay is None:
                    raise EngineUnavailable(
                        f"{e} (after {policy.retries} retries; is the server up? check its log, "
                        f"or raise --rollout-request-timeout)") from e
                time.sleep(delay)

    def post(self, path: str, body: Any = None, **kw) -> Any:
        return self.request("POST", path, {} if body is None else body, **kw)

    def get(self, path: str, **kw) -> Any:
        return self.request("GET", path, **kw)

    def healthy(self, timeout_s: float = 5.0) -> bool:
        try:
            self._once("GET", "/health", None, timeout_s)
            return True
        except (EngineUnavailable, EngineRequestError):
            return False

    def wait_healthy(self, timeout_s: float, poll_s: float = 1.0, alive=lambda: True) -> None:
        """Block until /health answers 200, `alive()` turns False, or the deadline."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not alive():
                raise EngineUnavailable(f"{self.url}: the server process exited during start-up")
            if self.healthy():
                return
            time.sleep(poll_s)
        raise EngineUnavailable(
            f"{self.url}: not healthy after {timeout_s:.0f}s; check the server log, or raise "
            f"--rollout-startup-timeout (loading a 30B model takes minutes)")

    def server_info(self) -> dict:
        try:
            return self.get("/server_info")
        except EngineRequestError:  # before the /server_info rename
            return self.get("/get_server_info")
