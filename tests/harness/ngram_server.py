"""A tiny deterministic character n-gram language model behind an OpenAI-compatible
completions endpoint on loopback, for running lm-evaluation-harness's `local-completions`
model offline (tests only).

Tokens are characters (token id = code point). The model is an interpolated n-gram model:
P(c | h) = (count(h c) + BETA * P(c | h without its first character)) / (count(h) + BETA),
down to a uniform distribution over the characters seen plus one unknown, so every
probability is positive and the distribution sums to one.

The server answers what the harness sends:
- `GET /tokenizer_info`, `POST /tokenize`, `POST /detokenize` (the harness's remote tokenizer,
  so no tokenizer is downloaded);
- `POST /v1/completions`: with `echo` and `logprobs` (log-likelihood requests), the prompt's
  token log-probabilities and each position's most likely token, plus one generated token;
  otherwise greedy generation up to `max_tokens` or a `stop` string.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BETA = 1.0
EOS = "\u0003"


class CharNgram:
    def __init__(self, texts, order: int = 4):
        self.order = order
        self.counts: dict[str, Counter] = defaultdict(Counter)
        for text in texts:
            for i, ch in enumerate(text):
                for k in range(order):
                    if i - k < 0:
                        break
                    self.counts[text[i - k : i]][ch] += 1
        self.vocab = sorted(self.counts[""])
        self.totals = {h: sum(c.values()) for h, c in self.counts.items()}
        self._best: dict[str, tuple[str, float]] = {}

    def prob(self, history: str, ch: str) -> float:
        history = history[-(self.order - 1) :] if self.order > 1 else ""
        p = 1.0 / (len(self.vocab) + 1)
        for k in range(len(history) + 1):
            h = history[len(history) - k :]
            total = self.totals.get(h)
            if total is None:
                break
            p = (self.counts[h][ch] + BETA * p) / (total + BETA)
        return p

    def logprob(self, history: str, ch: str) -> float:
        return math.log(self.prob(history, ch))

    def best(self, history: str) -> tuple[str, float]:
        """The most likely next character after `history` and its log-probability (ties go
        to the smaller character): among the characters seen after the history, and the
        best after the history one character shorter."""
        history = history[-(self.order - 1) :] if self.order > 1 else ""
        if history not in self._best:
            if history and history in self.totals:
                candidates = set(self.counts[history]) | {self.best(history[1:])[0]}
            elif history:
                candidates = {self.best(history[1:])[0]}
            else:
                candidates = set(self.vocab)
            ch = min(candidates, key=lambda c: (-self.prob(history, c), c))
            self._best[history] = (ch, self.logprob(history, ch))
        return self._best[history]

    def history(self, text: str, i: int) -> str:
        """What the model sees before text[i]: the order - 1 characters before it."""
        return text[max(0, i - self.order + 1) : i]

    def continuation_logprob(self, context: str, continuation: str) -> float:
        """Sum of log P(continuation[i] | context + continuation[:i]), in order (the sum the
        harness makes of the echoed token log-probabilities)."""
        text = context + continuation
        return sum(self.logprob(self.history(text, i), text[i]) for i in range(len(context), len(text)))

    def generate(self, prompt: str, max_tokens: int, stop: list[str]) -> str:
        out = ""
        while len(out) < max_tokens:
            ch = self.best((prompt + out)[-self.order :])[0]
            out += ch
            for s in stop:
                if s and s in out:
                    return out[: out.index(s)]
        return out


def _prompts(prompt) -> list[str]:
    if isinstance(prompt, str):
        return [prompt]
    if prompt and isinstance(prompt[0], int):
        return ["".join(map(chr, prompt))]
    return [p if isinstance(p, str) else "".join(map(chr, p)) for p in prompt]


def _echo_choice(model: CharNgram, index: int, text: str) -> dict:
    logprobs, tops = [None], [None]
    for i in range(1, len(text)):
        history = model.history(text, i)
        logprobs.append(model.logprob(history, text[i]))
        best, lp = model.best(history)
        tops.append({best: lp})
    best, lp = model.best(model.history(text, len(text)))
    tokens = list(text) + [best]
    return {
        "index": index,
        "text": text + best,
        "logprobs": {
            "tokens": tokens,
            "token_logprobs": logprobs + [lp],
            "top_logprobs": tops + [{best: lp}],
            "text_offset": list(range(len(tokens))),
        },
    }


def completion(model: CharNgram, body: dict) -> dict:
    prompts = _prompts(body["prompt"])
    if body.get("echo"):
        choices = [_echo_choice(model, i, p) for i, p in enumerate(prompts)]
    else:
        stop = body.get("stop") or []
        stop = [stop] if isinstance(stop, str) else stop
        choices = [
            {"index": i, "text": model.generate(p, int(body.get("max_tokens", 16)), stop)}
            for i, p in enumerate(prompts)
        ]
    return {"id": "cmpl-ngram", "object": "text_completion", "model": body.get("model", "ngram"), "choices": choices}


def _handler(model: CharNgram, log: list):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, payload: dict, status: int = 200) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            log.append(("GET", self.path))
            if self.path.rstrip("/") == "/tokenizer_info":
                return self._send({"eos_token": EOS, "bos_token": None, "pad_token": None})
            return self._send({"error": "not found"}, 404)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            log.append(("POST", self.path))
            path = self.path.rstrip("/")
            if path == "/tokenize":
                return self._send({"tokens": [ord(c) for c in body["prompt"]]})
            if path == "/detokenize":
                return self._send({"prompt": "".join(map(chr, body["tokens"]))})
            if path == "/v1/completions":
                return self._send(completion(model, body))
            return self._send({"error": "not found"}, 404)

        def log_message(self, *args):
            pass

    return Handler


class Server:
    """`with Server(model) as url:` serves the model on 127.0.0.1 (a free port) until the block ends."""

    def __init__(self, model: CharNgram):
        self.model, self.log = model, []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model, self.log))

    def __enter__(self) -> str:
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/completions"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
