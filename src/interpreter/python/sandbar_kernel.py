"""Sandbar's Python worker, one per context: an IPython shell speaking the JSON-lines protocol
of src/interpreter/kernels/worker-event.ts (requests on stdin, events on stdout).

Output paths, and why:
- Protocol events go to a duplicate of the original fd 1, taken before anything else runs, so
  nothing the user's code writes can land in the protocol stream. One writer thread writes
  them all, in order; other threads only queue events, so an interrupt never cuts a line.
- Python-level writes (print, sys.stdout/sys.stderr) become stdout/stderr events. As in
  ipykernel, writes to the same stream within STREAM_COALESCE_SECONDS form one chunk, so
  `print("hello")` is the one chunk "hello\n" and a print per second is a chunk per second;
  a write to the other stream, a result, an error or the end of the cell sends the chunk at
  once, keeping the order the user's code wrote in.
- fds 1 and 2 are pipes read by `FdForwarder` threads, so that subprocesses (`!ls`,
  `os.system`, C extensions) reach the user as stdout/stderr events too. Before a cell's `done`,
  a marker written into each pipe is waited for, so that their output comes before `done`.
  Bytes written while no cell runs (background processes) have no request to belong to and are
  dropped.
- fd 0 is /dev/null for the user's code: `input()` gets EOF instead of reading protocol lines.
- Our own diagnostics go to a duplicate of the original fd 2.

Interrupts: SIGINT raises KeyboardInterrupt once in the running cell; IPython reports it as
the cell's error. Between cells, and after the cell has taken it, SIGINT does nothing. The
worker's own threads block SIGINT, so it always lands in the main thread.
"""

import base64
import codecs
import datetime
import json
import os
import queue
import re
import signal
import sys
import threading
import time
import traceback

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

import sandbar_formatters
import sandbar_json

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# MIME types whose values travel as JSON values rather than strings.
JSON_MIME_TYPES = {"application/json", "e2b/data", "e2b/chart"}


STREAM_COALESCE_SECONDS = 0.1
# A chunk is sent once it is this long, however fast the writes come.
STREAM_CHUNK_LIMIT = 64 * 1024


def now_iso():
    __tracebackhide__ = True  # IPython leaves frames marked so out of tracebacks
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def block_sigint_in_this_thread():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


class Protocol:
    """Sends events as JSON lines to the saved protocol fd from one writer thread, joining
    stream writes into chunks (see the module's docstring)."""

    def __init__(self, fd):
        self.fd = fd
        self.queue = queue.SimpleQueue()
        self.request_id = None
        self.writer = threading.Thread(target=self.write_events, name="protocol", daemon=True)
        self.writer.start()

    def emit(self, event):
        self.queue.put(("event", event))

    def emit_stream(self, name, text):
        """Queues user output of the running request; dropped when no request runs."""
        __tracebackhide__ = True
        request_id = self.request_id
        if request_id is not None and text:
            self.queue.put(("stream", (request_id, name, text, now_iso())))

    def close(self):
        self.queue.put(("close", None))
        self.writer.join()

    def write_events(self):
        block_sigint_in_this_thread()
        chunk = None  # [request_id, name, text, timestamp, deadline]
        while True:
            timeout = None if chunk is None else max(0.0, chunk[4] - time.monotonic())
            try:
                kind, item = self.queue.get(timeout=timeout)
            except queue.Empty:
                self.write_chunk(chunk)
                chunk = None
                continue
            if kind == "stream":
                request_id, name, text, timestamp = item
                if chunk is not None and chunk[0] == request_id and chunk[1] == name:
                    chunk[2] += text
                else:
                    self.write_chunk(chunk)
                    deadline = time.monotonic() + STREAM_COALESCE_SECONDS
                    chunk = [request_id, name, text, timestamp, deadline]
                if len(chunk[2]) >= STREAM_CHUNK_LIMIT:
                    self.write_chunk(chunk)
                    chunk = None
                continue
            self.write_chunk(chunk)
            chunk = None
            if kind == "close":
                return
            self.write_line(item)

    def write_chunk(self, chunk):
        if chunk is not None:
            request_id, name, text, timestamp, _ = chunk
            self.write_line({"id": request_id, "type": name, "text": text, "timestamp": timestamp})

    def write_line(self, event):
        view = memoryview(self.encode(event))
        while view:
            written = os.write(self.fd, view)
            view = view[written:]

    @staticmethod
    def encode(event):
        try:
            text = json.dumps(event, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = json.dumps(sandbar_json.jsonable(event, fallback=str), ensure_ascii=False)
        return (text + "\n").encode("utf-8", "replace")

    def emit_for_request(self, event):
        """Queues an event of the running request; dropped when no request runs."""
        request_id = self.request_id
        if request_id is not None:
            self.emit({"id": request_id, **event})


class EventStream:
    """A text stream (sys.stdout / sys.stderr) whose writes become the user's output."""

    def __init__(self, protocol, name, fd):
        self.protocol = protocol
        self.name = name
        self.fd = fd
        self.encoding = "utf-8"
        self.errors = "replace"

    def write(self, text):
        __tracebackhide__ = True
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.protocol.emit_stream(self.name, text)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def fileno(self):
        # Subprocesses handed sys.stdout write to the fd, which FdForwarder turns into events.
        return self.fd

    def isatty(self):
        return False

    def readable(self):
        return False

    def writable(self):
        return True

    def seekable(self):
        return False

    @property
    def closed(self):
        return False


class FdForwarder:
    """Points an fd at a pipe and turns whatever is written into it into events."""

    MARKER = b"\x00sandbar-drained\x00"

    def __init__(self, protocol, name, fd):
        self.protocol = protocol
        self.name = name
        self.fd = fd
        self.drained = threading.Event()
        read_end, write_end = os.pipe()
        os.dup2(write_end, fd)
        os.close(write_end)
        self.read_end = read_end
        threading.Thread(target=self.forward, name=f"forward-{name}", daemon=True).start()

    def forward(self):
        block_sigint_in_this_thread()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = b""
        while True:
            chunk = os.read(self.read_end, 65536)
            if not chunk:
                return
            pending += chunk
            while True:
                at = pending.find(self.MARKER)
                if at < 0:
                    break
                self.send(decoder.decode(pending[:at]))
                pending = pending[at + len(self.MARKER) :]
                self.drained.set()
            # Keep back a tail that may be the start of a marker split across reads.
            keep = self.partial_marker_length(pending)
            self.send(decoder.decode(pending[: len(pending) - keep]))
            pending = pending[len(pending) - keep :]

    def partial_marker_length(self, data):
        for length in range(min(len(data), len(self.MARKER) - 1), 0, -1):
            if self.MARKER.startswith(data[-length:]):
                return length
        return 0

    def send(self, text):
        self.protocol.emit_stream(self.name, text)

    def drain(self, timeout):
        """Waits until everything written to the fd so far has been sent."""
        self.drained.clear()
        try:
            os.write(self.fd, self.MARKER)
        except OSError:
            # The user's code closed or replaced the fd: nothing more will come through it.
            return
        self.drained.wait(timeout)


def wire_bundle(format_dict):
    bundle = {}
    for mime, value in format_dict.items():
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        elif mime in JSON_MIME_TYPES or mime.endswith("+json"):
            value = sandbar_json.jsonable(value, fallback=str)
        bundle[mime] = value
    return bundle


class ResultDisplayHook(DisplayHook):
    """Sends the cell's final expression value as the main result."""

    def start_displayhook(self):
        pass

    def write_output_prompt(self):
        pass

    def write_format_data(self, format_dict, md_dict=None):
        self.shell.protocol.emit_for_request(
            {"type": "result", "bundle": wire_bundle(format_dict), "is_main_result": True}
        )

    def finish_displayhook(self):
        pass


class ResultDisplayPublisher(DisplayPublisher):
    """Sends `display()` calls (and shown figures) as non-main results."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kw):
        self.shell.protocol.emit_for_request(
            {"type": "result", "bundle": wire_bundle(data), "is_main_result": False}
        )

    def clear_output(self, wait=False):
        pass


def cut_frame(trace, code):
    """Ends the traceback `trace` before its first entry that runs `code`."""
    entry = trace
    while entry is not None and entry.tb_next is not None:
        if entry.tb_next.tb_frame.f_code is code:
            entry.tb_next = None
            return
        entry = entry.tb_next


class SandbarShell(InteractiveShell):
    displayhook_class = ResultDisplayHook
    display_pub_class = ResultDisplayPublisher
    # `!cmd` runs with the worker's fds (no pty), so its output arrives as written, "\n" and all.
    system = InteractiveShell.system_raw

    def __init__(self, protocol, **kwargs):
        self.protocol = protocol
        self.cell_error = None
        super().__init__(**kwargs)

    def showtraceback(self, exc_tuple=None, *args, **kwargs):
        """An interrupt's traceback ends in the user's code, not in the worker's handler that
        raised it there (IPython never hides the last frame)."""
        error_type, _, trace = exc_tuple or sys.exc_info()
        if error_type is KeyboardInterrupt:
            cut_frame(trace, Worker.on_sigint.__code__)
        super().showtraceback(exc_tuple, *args, **kwargs)

    def _showtraceback(self, etype, evalue, stb):
        self.cell_error = {
            "name": etype.__name__,
            "value": str(evalue),
            "traceback": ANSI_ESCAPE.sub("", "".join(stb)),
        }

    def show_usage_error(self, exc):
        self.cell_error = {"name": "UsageError", "value": str(exc), "traceback": ""}


def shell_config():
    config = Config()
    config.InteractiveShell.colors = "NoColor"
    config.InteractiveShell.xmode = "Context"
    # One worker per context: history lives and dies with it, no shared sqlite file.
    config.HistoryManager.hist_file = ":memory:"
    return config


class Worker:
    def __init__(self):
        protocol_fd = os.dup(1)
        self.requests = os.fdopen(os.dup(0), "rb")
        self.diagnostics = os.fdopen(os.dup(2), "w", buffering=1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self.protocol = Protocol(protocol_fd)
        self.forwarders = [
            FdForwarder(self.protocol, "stdout", 1),
            FdForwarder(self.protocol, "stderr", 2),
        ]
        sys.stdin = open(os.devnull)
        sys.stdout = EventStream(self.protocol, "stdout", 1)
        sys.stderr = EventStream(self.protocol, "stderr", 2)
        self.cell_running = False
        self.cell_interrupted = False
        # A Python handler at all times rather than SIG_IGN between cells, which processes
        # started meanwhile would inherit.
        signal.signal(signal.SIGINT, self.on_sigint)
        self.shell = SandbarShell.instance(protocol=self.protocol, config=shell_config())
        sandbar_formatters.install(self.shell)

    def serve(self):
        self.protocol.emit({"type": "ready"})
        for line in self.requests:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                request_id = request["id"]
                code = request["code"]
            except (ValueError, KeyError, TypeError) as error:
                print(f"sandbar kernel: bad request {line!r}: {error}", file=self.diagnostics)
                continue
            self.execute(request_id, code, bool(request.get("silent", False)))

    def on_sigint(self, signum, frame):
        """Interrupts the running cell, once. The server sends SIGINT again until the cell ends,
        since one can land where Python cannot act on it: Python's C handler only flags the
        signal, and one landing after the main thread's last look and before it blocks in a
        system call (`time.sleep`) interrupts nothing. Those repeats must not reach the code
        that caught the first."""
        if self.cell_running and not self.cell_interrupted:
            self.cell_interrupted = True
            raise KeyboardInterrupt

    def execute(self, request_id, code, silent):
        shell = self.shell
        self.protocol.request_id = request_id
        shell.cell_error = None
        failed = False
        # The cell takes an interrupt from the moment its start is announced.
        self.cell_interrupted = False
        self.cell_running = True
        try:
            if not silent:
                self.protocol.emit(
                    {
                        "id": request_id,
                        "type": "number_of_executions",
                        "execution_count": shell.execution_count,
                    }
                )
            result = shell.run_cell(code, store_history=not silent, silent=silent)
            self.cell_running = False
            failed = not result.success
        except KeyboardInterrupt:
            self.cell_running = False
            failed = True
            shell.cell_error = {"name": "KeyboardInterrupt", "value": "", "traceback": ""}
        self.finish(request_id, failed)

    def finish(self, request_id, failed):
        for forwarder in self.forwarders:
            forwarder.drain(timeout=2)
        error = self.shell.cell_error
        if failed and error is None:
            error = {"name": "Error", "value": "the cell failed", "traceback": ""}
        if error is not None:
            self.protocol.emit({"id": request_id, "type": "error", **error})
        self.protocol.request_id = None
        status = "error" if error is not None else "ok"
        self.protocol.emit({"id": request_id, "type": "done", "status": status})


def main():
    worker = Worker()
    try:
        worker.serve()
    except BaseException:
        traceback.print_exc(file=worker.diagnostics)
        raise SystemExit(1)
    finally:
        worker.protocol.close()


if __name__ == "__main__":
    main()
