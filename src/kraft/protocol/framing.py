"""Sans-IO framing: Kafka frames are an int32 size followed by that many bytes.

``FrameDecoder`` is fed whatever the socket produced and hands back complete frame payloads. It
never buffers more than one frame plus the bytes of the next size prefix, and rejects a negative or
oversize length as soon as the four size bytes arrive, before reading (or allocating) the body.
"""

from __future__ import annotations

import struct

from kraft.common.errors import FrameTooLargeError

_SIZE = struct.Struct(">i")

# Kafka's socket.request.max.bytes default.
DEFAULT_MAX_FRAME_BYTES = 104_857_600

# A decoder keeps its gathering buffer between frames up to this size (the default fetch
# response's partition bytes, with room for headers); a larger frame's buffer goes with it.
_KEEP_BYTES = 2 * 1_048_576


def frame(payload: bytes | bytearray | memoryview) -> bytes:
    """Prefix ``payload`` with its int32 size."""
    return b"".join((_SIZE.pack(len(payload)), payload))


class FrameDecoder:
    """Accumulates bytes and yields complete frames.

    A frame that lies whole in what was fed is copied out of it once; one cut by a chunk is
    gathered in a buffer at least its announced size, reused for the next such frame up to
    ``_KEEP_BYTES`` (a fresh megabyte costs page faults; a buffer that grew as chunks came was
    reallocated, and shifted down after each frame, several times per megabyte). Only a cut size
    prefix waits on its own.

    Args:
        max_frame_bytes: the largest frame body accepted (Kafka's ``socket.request.max.bytes``).
    """

    __slots__ = ("_body", "_filled", "_head", "_size_wanted", "_spare", "max_frame_bytes")

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._head = b""  # the first bytes (fewer than 4) of a size prefix cut by a chunk
        self._body: bytearray | None = None  # gathers the frame in progress
        self._size_wanted = 0  # its size
        self._filled = 0  # its bytes so far
        self._spare = bytearray()  # the gathering buffer kept between frames
        self.max_frame_bytes = max_frame_bytes

    @property
    def buffered(self) -> int:
        return len(self._head) + self._filled

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """Add ``data`` and return every frame now complete, in order.

        Raises:
            FrameTooLargeError: a size prefix is negative or larger than ``max_frame_bytes``. The
                decoder is then unusable: the stream has lost its framing and must be closed.
        """
        frames: list[bytes] = []
        with memoryview(data) as view:
            end = len(view)
            pos = 0
            body = self._body
            if body is not None:  # a frame in progress takes what it still lacks
                filled = self._filled
                take = min(self._size_wanted - filled, end)
                body[filled : filled + take] = view[:take]
                self._filled = filled = filled + take
                if filled < self._size_wanted:
                    return frames
                with memoryview(body) as gathered:
                    frames.append(bytes(gathered[:filled]))
                self._body = None
                self._filled = 0
                pos = take
            if self._head:  # a cut size prefix completes from the front of ``data``
                need = 4 - len(self._head)
                if end - pos < need:
                    self._head += bytes(view[pos:end])
                    return frames
                size = self._size(self._head + bytes(view[pos : pos + need]), 0)
                self._head = b""
                pos += need
                pos = self._start_body(view, pos, end, size, frames)
            while end - pos >= 4:
                size = self._size(view, pos)
                pos = self._start_body(view, pos + 4, end, size, frames)
            if pos < end and self._body is None:
                self._head = bytes(view[pos:end])
        return frames

    def _size(self, buf: bytes | memoryview, pos: int) -> int:
        (size,) = _SIZE.unpack_from(buf, pos)
        if size < 0:
            raise FrameTooLargeError(f"negative frame size {size}")
        if size > self.max_frame_bytes:
            raise FrameTooLargeError(
                f"frame of {size} bytes exceeds the maximum request size of {self.max_frame_bytes} bytes"
            )
        return int(size)

    def _start_body(self, view: memoryview, pos: int, end: int, size: int, frames: list[bytes]) -> int:
        """A frame of ``size`` starts at ``pos``: taken whole if ``view`` holds it, else begun in a
        body of its full size. Returns where the next frame starts (``end`` if this one continues)."""
        if end - pos >= size:
            frames.append(bytes(view[pos : pos + size]))
            return pos + size
        body = self._spare
        if len(body) < size:
            body = bytearray(size)
            if size <= _KEEP_BYTES:
                self._spare = body
        body[: end - pos] = view[pos:end]
        self._body = body
        self._size_wanted = size
        self._filled = end - pos
        return end
