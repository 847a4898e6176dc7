"""FakeSGLangServer: a TEST DOUBLE of an SGLang HTTP server on loopback, implementing the
endpoints of shared/reference/sglang.md that the bridge calls, with injectable faults.

It checks the update-session order itself (an update outside begin/end, or a continue
before end, is answered 400 like a confused server would) and records every call, so tests
assert on what a real server would have seen. It is not SGLang: no real server was run.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Optional

import numpy as np


class FakeSGLangServer:
    def __init__(self, version: str = "0.5.23", tp_size: int = 1, num_layers: int = 2,
                 top_k: int = 2, num_experts: int = 4,
                 decode_payload: Optional[Callable] = None, ep_size: Optional[int] = None):
        self.version, self.tp_size, self.ep_size = version, tp_size, ep_size  # None: unreported
        self.num_layers, self.top_k, self.num_experts = num_layers, top_k, num_experts
        self.decode_payload = decode_payload  # payload -> [(name, tensor)] (SGLang's classes)
        self.calls: List[str] = []
        self.received: Dict[str, object] = {}
        self.generated: List[tuple] = []  # (request body, the outputs answered)
        self.version_updates: List[str] = []
        self.weight_version = "0"
        self.paused = self.in_update = False
        self.die_on: Dict[str, int] = {}  # path -> die at this call number (1-based)
        self.delay: Dict[str, float] = {}
        self.reject: set = set()
        self.abort_generates = 0  # answer this many /generate calls with aborted samples
        self.deterministic = False  # as started with --enable-deterministic-inference
        self.server_args: Dict[str, object] = {}  # more ServerArgs fields /server_info reports
        self._counts: Dict[str, int] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def kill(self) -> None:
        """The process died: the port stops answering."""
        threading.Thread(target=self.httpd.shutdown, daemon=True).start()
        self.httpd.server_close()

    # -- endpoint logic: (status, body) ---------------------------------------------------
    def handle(self, path: str, body: dict):
        if path in self.reject:
            return 400, {"success": False, "message": f"injected rejection of {path}"}
        h = getattr(self, "_" + path.strip("/"), None)
        if h is None:
            return 404, {"detail": "Not Found"}
        return h(body or {})

    def _health(self, _):
        return 200, None

    def _server_info(self, _):
        info = {"version": self.version, "tp_size": self.tp_size, "dp_size": 1,
                **self.server_args}
        return 200, info if self.ep_size is None else {**info, "ep_size": self.ep_size}

    def _generate(self, body):
        prompts = body["input_ids"]
        params = body["sampling_params"]
        params = params if isinstance(params, list) else [params] * len(prompts)
        outs = []
        aborted, self.abort_generates = self.abort_generates > 0, max(0, self.abort_generates - 1)
        for prompt, sp in zip(prompts, params):
            for j in range(sp.get("n", 1)):
                # SGLang's draw: a seeded request's samples follow its seed alone, and under
                # --enable-deterministic-inference an unseeded one is seeded with 42, shared
                # by its n copies; else each copy draws its own
                seed = sp.get("sampling_seed", 42 if self.deterministic else None)
                draw = j if seed is None else seed
                ids = [(sum(prompt) + draw + t) % 97 for t in range(min(3, sp["max_new_tokens"]))]
                meta = {"id": f"r{len(outs)}", "weight_version": self.weight_version,
                        "prompt_tokens": len(prompt),
                        "finish_reason": {"type": "abort"} if aborted else
                        {"type": "length", "length": len(ids)},
                        "output_token_logprobs": [[-0.25 * (t + 1), i, None]
                                                  for t, i in enumerate(ids)]}
                if body.get("return_routed_experts"):
                    meta["routed_experts"] = self.routed_experts(prompt + ids)
                outs.append({"text": "", "output_ids": ids, "meta_info": meta})
        self.generated.append((body, outs))
        return 200, outs

    def routed_experts(self, tokens: List[int]) -> str:
        """SGLang's format: base64 int32 [len(tokens)-1, layers, top_k]. Token t's experts in
        layer l are (t + l + k) % num_experts: they follow the token, so a replay shifted in
        position or batch row would route differently."""
        t = np.asarray(tokens[:-1], dtype=np.int64)[:, None, None]
        layer = np.arange(self.num_layers)[None, :, None]
        k = np.arange(self.top_k)[None, None, :]
        routed = ((t + layer + k) % self.num_experts).astype(np.int32)
        return base64.b64encode(routed.tobytes()).decode()

    def _pause_generation(self, _):
        self.paused = True
        return 200, {"status": "ok"}

    def _flush_cache(self, _):
        return 200, "Cache flushed."

    def _begin_weight_update(self, _):
        if not self.paused:
            return 400, {"success": False, "message": "begin while serving"}
        if self.in_update:  # SGLang 0.5.23's scheduler holds one session at a time
            return 400, {"success": False, "message": "a weight-update session is already "
                                                      "open; call end_weight_update() first"}
        self.in_update = True
        return 200, {"success": True, "message": ""}

    def _update_weights_from_tensor(self, body):
        if not self.in_update or body.get("flush_cache", True):
            return 400, {"success": False, "message": "update outside a session / flushing"}
        if len(body["serialized_named_tensors"]) != self.tp_size:
            return 400, {"success": False, "message": "one payload per TP rank expected"}
        if self.decode_payload is not None:
            for rank, payload in enumerate(body["serialized_named_tensors"]):
                for name, tensor in self.decode_payload(payload, body["load_format"]):
                    if rank == 0:
                        self.received[name] = tensor
        return 200, {"success": True, "message": "Success"}

    def _end_weight_update(self, _):
        if not self.in_update:
            return 400, {"success": False, "message": "end without begin"}
        self.in_update = False
        return 200, {"success": True, "message": ""}

    def _update_weight_version(self, body):
        self.weight_version = body["new_version"]
        self.version_updates.append(body["new_version"])
        return 200, {"success": True, "new_version": body["new_version"]}

    def _continue_generation(self, _):
        if self.in_update:
            return 400, {"success": False, "message": "continue inside a weight update"}
        self.paused = False
        return 200, {"status": "ok"}

    def _release_memory_occupation(self, _):
        return 200, None

    def _resume_memory_occupation(self, _):
        return 200, None

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                path = self.path.split("?")[0]
                with server._lock:
                    server.calls.append(path)
                    n = server._counts[path] = server._counts.get(path, 0) + 1
                if server.die_on.get(path) == n:
                    server.kill()
                    self.close_connection = True
                    self.connection.close()  # the client sees a dropped connection
                    return
                time.sleep(server.delay.get(path, 0))
                with server._lock:
                    status, out = server.handle(path, body)
                raw = (out if isinstance(out, str) else json.dumps(out)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

            do_GET = do_POST = _serve

        return Handler
