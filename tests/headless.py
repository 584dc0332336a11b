"""Headless Chromium (Debian's `chromium`) driven over the DevTools
protocol on a pipe (--remote-debugging-pipe: commands on the browser's
fd 3, answers on its fd 4, each a JSON message ending in a NUL byte).
No port, no network; python3-pil reads the screenshots.
"""
from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import pathlib
import subprocess
import tempfile
import time
import urllib.parse
from typing import Any, Optional

from matrix.build import deps

NEEDS = deps.BROWSER


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width: int = 1280, height: int = 2000,
                 timeout: float = 30.0):
        deps.ensure_needs(NEEDS)
        self.timeout = timeout
        cmd_r, cmd_w = os.pipe()
        ans_r, ans_w = os.pipe()
        # above 4, so that putting them at 3 and 4 cannot clobber them
        child_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(ans_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(ans_w)
        self.profile = tempfile.TemporaryDirectory(prefix="nopfn-chromium-")

        def fds():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)
        args = ["chromium", "--headless", "--disable-gpu",
                "--remote-debugging-pipe", "--no-first-run",
                "--disable-extensions", "--disable-background-networking",
                "--disable-dev-shm-usage",
                f"--user-data-dir={self.profile.name}",
                f"--window-size={width},{height}"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")     # Chromium refuses root without
        self.proc = subprocess.Popen(args + ["about:blank"], preexec_fn=fds,
                                     close_fds=False,
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(child_r)
        os.close(child_w)
        self._w = os.fdopen(cmd_w, "wb", buffering=0)
        self._r = os.fdopen(ans_r, "rb", buffering=0)
        self._buf = b""
        self._id = 0
        self._events: list[dict] = []
        target = self.send("Target.createTarget",
                           {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target,
                                  "flatten": True})["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height,
                   "deviceScaleFactor": 1, "mobile": False}, session=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._w.close()
        self._r.close()
        self.profile.cleanup()

    # ---------------------------------------------------------- protocol
    def _recv(self, deadline: float) -> dict:
        import select
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise BrowserError("chromium did not answer in time")
            chunk = self._r.read(1 << 16)
            if not chunk:
                raise BrowserError("chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: Optional[dict] = None,
             session: bool = False) -> dict:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method,
                               "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self._w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._recv(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error']}")
                return m.get("result", {})
            self._events.append(m)

    def _wait_event(self, name: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, m in enumerate(self._events):
                if m.get("method") == name:
                    return self._events.pop(i)
            self._events.append(self._recv(deadline))

    # ----------------------------------------------------------- helpers
    def open(self, url: str) -> None:
        """Load a page and wait for its load event."""
        self._events.clear()
        res = self.send("Page.navigate", {"url": url}, session=True)
        if res.get("errorText"):
            raise BrowserError(f"{url}: {res['errorText']}")
        self._wait_event("Page.loadEventFired")

    def eval(self, expression: str) -> Any:
        """Evaluate JavaScript in the page; JSON-able result."""
        res = self.send("Runtime.evaluate",
                        {"expression": expression, "returnByValue": True},
                        session=True)
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression[:60]}...: "
                               f"{res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self):
        """The viewport as it is drawn, a PIL RGB image."""
        from PIL import Image
        data = self.send("Page.captureScreenshot", {"format": "png"},
                         session=True)["data"]
        return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


def file_url(path: pathlib.Path) -> str:
    return pathlib.Path(path).resolve().as_uri()


def url_path(url: str) -> pathlib.Path:
    """The file a file:// URL names."""
    u = urllib.parse.urlparse(url)
    if u.scheme != "file":
        raise ValueError(f"not a file URL: {url}")
    return pathlib.Path(urllib.parse.unquote(u.path))
