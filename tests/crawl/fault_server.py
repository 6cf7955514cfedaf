"""A loopback HTTP server that misbehaves the ways real sites do, for the crawler's fault tests.

`with FaultServer() as s:` serves on 127.0.0.1:<free port> from a thread. Every route is a
fault named by its path (`ROUTES`); `s.hits` counts requests per path. It is bounded: after
`max_requests` requests it answers nothing more (closes the connection), every response ends
within a few seconds (a drip stops by itself, a 50 MB body stops when the client hangs up),
and the server shuts itself down after `lifetime` seconds if the test has not.
`robots` picks the robots.txt answer: "disallow" (`Disallow: /private/`), "500", "404" or
"hour" (`Crawl-delay: 3600`).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import gzip
import http.server
import socket
import struct
import threading
import time
import zlib

BIG = 50 * 1024 * 1024  # the 50 MB bodies
CHUNK = 64 * 1024
STORY = "<html><head><title>t</title></head><body><h1>T</h1><div class=b><p>{}</p></div></body></html>"


def story(name: str) -> bytes:
    return STORY.format(f"story {name}").encode("utf-8")


def _bomb() -> bytes:
    """50 MB of spaces gzipped to about 50 KB (built once, a chunk at a time)."""
    if _BOMB:
        return _BOMB[0]
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    block = b" " * (1024 * 1024)
    data = b"".join(packer.compress(block) for _ in range(BIG // len(block))) + packer.flush()
    _BOMB.append(data)
    return data


_BOMB: list[bytes] = []
META_GBK = (
    '<html><head><meta charset="gbk"><title>目录</title></head><body><h1>故事目录</h1>'
    '<a href="/s/meta-linked.html">第一个故事</a></body></html>'
).encode("gbk")


class FaultServer:
    def __init__(
        self,
        robots: str = "disallow",
        offsite: str = "",
        max_requests: int = 300,
        lifetime: float = 90.0,
        drip_seconds: float = 0.1,
        page_delay: float = 0.0,
        many: int = 0,
        index_links: bool = True,
    ):
        self.robots, self.offsite, self.max_requests = robots, offsite, max_requests
        self.index_links = index_links
        self.drip_seconds, self.page_delay, self.many = drip_seconds, page_delay, many
        self.hits: dict[str, int] = {}
        self.log: list[str] = []
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base, self.host = f"http://127.0.0.1:{self.port}", f"127.0.0.1:{self.port}"
        self._timer = threading.Timer(lifetime, self.httpd.shutdown)
        self._timer.daemon = True

    def __enter__(self) -> FaultServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def paths(self) -> list[str]:
        with self._lock:
            return list(self.log)

    def _count(self, path: str) -> int | None:
        with self._lock:
            if len(self.log) >= self.max_requests:
                return None
            self.log.append(path)
            self.hits[path] = self.hits.get(path, 0) + 1
            return self.hits[path]

    def _handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                n = server._count(path)
                if n is None:
                    self.close_connection = True
                    return
                try:
                    server.respond(self, path, n)
                except (TimeoutError, BrokenPipeError, ConnectionResetError):
                    pass  # the crawler hung up: a body over max_bytes, a drip past its deadline

        return Handler

    # ------------------------------------------------------------------ answers
    @staticmethod
    def send(
        h,
        status: int,
        body: bytes = b"",
        ctype: str | None = "text/html",
        headers: dict | None = None,
        length: int | None = -1,
    ) -> None:
        h.send_response(status)
        if ctype:
            h.send_header("Content-Type", ctype)
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        if length is not None:
            h.send_header("Content-Length", str(len(body) if length == -1 else length))
        h.end_headers()
        h.wfile.write(body)

    def robots_txt(self, h) -> None:
        if self.robots == "500":
            return self.send(h, 500, b"oops", "text/plain")
        if self.robots == "404":
            return self.send(h, 404, b"no robots here", "text/plain")
        if self.robots == "hour":
            return self.send(h, 200, b"User-agent: *\nCrawl-delay: 3600\n", "text/plain")
        self.send(h, 200, b"User-agent: *\nDisallow: /private/\n", "text/plain")

    def index(self) -> bytes:
        """Links to every fault page, a list page in GBK, a disallowed page and an off-host page
        (or, with `index_links=False`, to one ordinary story)."""
        if not self.index_links:
            return b'<html><body><a href="/s/fine.html">fine</a></body></html>'
        links = [f"/s/{name}.html" for name in PAGES] + ["/meta-gbk.html", "/private/secret.html"]
        links.append(f"{self.offsite}/s/offsite-link.html" if self.offsite else "http://192.0.2.1/s/x.html")
        anchors = "".join(f'<a href="{link}">{link}</a>\n' for link in links)
        return f"<html><body><h1>index</h1>{anchors}</body></html>".encode()

    def many_page(self) -> bytes:
        anchors = "".join(f'<a href="/n/{i:02d}.html">{i}</a>\n' for i in range(self.many))
        return f"<html><body>{anchors}</body></html>".encode()

    def respond(self, h, path: str, n: int) -> None:
        if path == "/robots.txt":
            return self.robots_txt(h)
        if path == "/index.html":
            return self.send(h, 200, self.index())
        if path == "/many.html":
            return self.send(h, 200, self.many_page())
        if path == "/meta-gbk.html":  # charset only in <meta>, none in the header
            return self.send(h, 200, META_GBK, "text/html")
        if path.startswith("/n/"):
            time.sleep(self.page_delay)
            return self.send(h, 200, story(path))
        name = path[len("/s/") : -len(".html")] if path.startswith("/s/") and path.endswith(".html") else ""
        if name.startswith("chain-"):  # chain-0 -> chain-1 -> chain-2 -> chain-3 (a page)
            step = int(name.split("-")[1])
            if step < 3:
                return self.send(h, 302, headers={"Location": f"/s/chain-{step + 1}.html"})
        if name.startswith("longchain-"):  # longchain-0 -> longchain-1 -> ... never a page
            step = int(name.split("-")[1])
            return self.send(h, 301, headers={"Location": f"/s/longchain-{step + 1}.html"})
        answer = getattr(self, "page_" + name.replace("-", "_"), None)
        if answer is None:
            return self.send(h, 200, story(name)) if name else self.send(h, 404, b"<html>no</html>")
        return answer(h, n)

    # one method per fault page, `page_<name>` for `/s/<name>.html`
    def page_gzip(self, h, n):
        self.send(h, 200, gzip.compress(story("gzip")), headers={"Content-Encoding": "gzip"})

    def page_bomb(self, h, n):
        self.send(h, 200, _bomb(), headers={"Content-Encoding": "gzip"})

    def page_cut_gzip(self, h, n):  # a gzip stream without its end (Content-Length is the bytes sent)
        packed = gzip.compress(story("cut") * 20, mtime=0)
        self.send(h, 200, packed[: len(packed) * 2 // 3], headers={"Content-Encoding": "gzip"})

    def page_bad_gzip(self, h, n):
        self.send(h, 200, b"\x1f\x8bnot really gzip at all" + story("x"), headers={"Content-Encoding": "gzip"})

    def page_unknown_encoding(self, h, n):  # an encoding requests cannot undo: raw bytes are no page
        self.send(h, 200, b"\x0b\x02\x80<html>", headers={"Content-Encoding": "x-squash"})

    def page_bad_location(self, h, n):  # a Location no URL parser accepts
        self.send(h, 302, headers={"Location": "http://[::1/x.html"})

    def page_pdf(self, h, n):
        self.send(h, 200, b"%PDF-1.4 not a page", "application/pdf")

    def page_plain(self, h, n):
        self.send(h, 200, story("plain"), "text/plain")

    def page_no_type(self, h, n):
        self.send(h, 200, b"just some bytes", None)

    def page_no_type_html(self, h, n):
        self.send(h, 200, story("no type"), None)

    def page_big_length(self, h, n):  # 50 MB announced by Content-Length
        self._stream(h, length=True)

    def page_big_stream(self, h, n):  # 50 MB with no length: the body ends when the server closes
        self._stream(h, length=False)

    def _stream(self, h, length: bool) -> None:
        self.send(h, 200, b"", length=BIG if length else None)
        block, deadline = b"<p>" + b"x" * (CHUNK - 7) + b"</p>", time.monotonic() + 10
        for _ in range(BIG // CHUNK):
            if time.monotonic() > deadline:
                break
            h.wfile.write(block)

    def page_retry_seconds(self, h, n):
        if n == 1:
            return self.send(h, 429, b"slow down", "text/plain", headers={"Retry-After": "1"})
        self.send(h, 200, story("retry seconds"))

    def page_retry_date(self, h, n):
        if n == 1:
            when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2)
            return self.send(
                h,
                429,
                b"slow down",
                "text/plain",
                headers={"Retry-After": email.utils.format_datetime(when, usegmt=True)},
            )
        self.send(h, 200, story("retry date"))

    def page_retry_hour(self, h, n):
        self.send(h, 429, b"come back in an hour", "text/plain", headers={"Retry-After": "3600"})

    def page_unavailable_once(self, h, n):
        if n == 1:
            return self.send(h, 503, b"<html>busy</html>")
        self.send(h, 200, story("503 then 200"))

    def page_always_500(self, h, n):
        self.send(h, 500, b"<html>broken</html>")

    def page_missing_plain(self, h, n):
        self.send(h, 404, b"Not Found", "text/plain")

    def page_gone(self, h, n):
        self.send(h, 410, b"<html>gone</html>")

    def page_loop_a(self, h, n):
        self.send(h, 302, headers={"Location": "/s/loop-b.html"})

    def page_loop_b(self, h, n):
        self.send(h, 302, headers={"Location": "/s/loop-a.html"})

    def page_offsite(self, h, n):
        self.send(h, 302, headers={"Location": f"{self.offsite}/s/landing.html"})

    def page_to_private(self, h, n):
        self.send(h, 302, headers={"Location": "/private/secret.html"})

    def page_reset(self, h, n):
        self._reset(h)

    def page_reset_once(self, h, n):
        if n == 1:
            return self._reset(h)
        self.send(h, 200, story("reset once"))

    @staticmethod
    def _reset(h) -> None:
        """Close with RST (SO_LINGER 0): the client sees 'connection reset by peer'."""
        h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.close_connection = True
        h.connection.close()

    def page_drip(self, h, n):  # a whole header, then one body byte every drip_seconds
        body = story("drip") * 20
        self.send(h, 200, b"", length=len(body))
        self._drip(h, body)

    def page_drip_headers(self, h, n):  # even the status line comes a byte at a time
        self._drip(h, b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello")

    def _drip(self, h, data: bytes) -> None:
        stop = time.monotonic() + 8  # bounded even if the client never hangs up
        for i in range(len(data)):
            if time.monotonic() > stop:
                break
            h.wfile.write(data[i : i + 1])
            h.wfile.flush()
            time.sleep(self.drip_seconds)


PAGES = [
    "gzip",
    "bomb",
    "bad-gzip",
    "cut-gzip",
    "unknown-encoding",
    "bad-location",
    "pdf",
    "plain",
    "no-type",
    "no-type-html",
    "big-length",
    "big-stream",
    "retry-seconds",
    "retry-date",
    "retry-hour",
    "unavailable-once",
    "always-500",
    "missing-plain",
    "gone",
    "chain-0",
    "longchain-0",
    "loop-a",
    "offsite",
    "to-private",
    "reset",
    "reset-once",
    "drip",
    "drip-headers",
]
