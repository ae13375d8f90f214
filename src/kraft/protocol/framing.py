"""Sans-IO framing: Kafka frames are an int32 size followed by that many bytes.

``FrameDecoder`` is fed whatever the socket produced and hands back complete frame payloads. It
never buffers more than one frame plus the bytes of the next size prefix, and rejects a negative or
oversize length as soon as the four size bytes arrive, before reading (or allocating) the body.
"""

from __future__ import annotations

import struct

from kraft.common.errors import FrameTooLargeError

# The int32 size before every frame (public: encoders that reserve it and fill it in last).
FRAME_SIZE = struct.Struct(">i")

# Kafka's socket.request.max.bytes default.
DEFAULT_MAX_FRAME_BYTES = 104_857_600


def frame(payload: bytes | bytearray | memoryview) -> bytes:
    """Prefix ``payload`` with its int32 size."""
    return b"".join((FRAME_SIZE.pack(len(payload)), payload))


class FrameDecoder:
    """Accumulates bytes and yields complete frames.

    Each frame's payload is copied once: out of what was fed when it lies whole in it (not at all
    when it is exactly a ``bytes`` fed), else the pieces of it that came are kept as they are (a
    ``bytes`` fed whole is kept by reference) and joined when the last arrives. Nothing is kept
    between frames but a cut size prefix. (A buffer that grew as chunks came was reallocated, and
    shifted down after each frame, several times per megabyte.)

    Args:
        max_frame_bytes: the largest frame body accepted (Kafka's ``socket.request.max.bytes``).
    """

    __slots__ = ("_filled", "_head", "_pieces", "_size_wanted", "max_frame_bytes")

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._head = b""  # the first bytes (fewer than 4) of a size prefix cut by a chunk
        self._pieces: list[bytes] | None = None  # the frame in progress, as it came
        self._size_wanted = 0  # its size
        self._filled = 0  # its bytes so far
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
            pieces = self._pieces
            if pieces is not None:  # a frame in progress takes what it still lacks
                take = min(self._size_wanted - self._filled, end)
                pieces.append(_piece(data, view, 0, take))
                self._filled += take
                if self._filled < self._size_wanted:
                    return frames
                frames.append(b"".join(pieces))
                self._pieces = None
                self._filled = 0
                pos = take
            if self._head:  # a cut size prefix completes from the front of ``data``
                need = 4 - len(self._head)
                if end - pos < need:
                    self._head += bytes(view[pos:end])
                    return frames
                size = self._size(self._head + bytes(view[pos : pos + need]), 0)
                self._head = b""
                pos = self._start(data, view, pos + need, end, size, frames)
            while end - pos >= 4:
                size = self._size(view, pos)
                pos = self._start(data, view, pos + 4, end, size, frames)
            if pos < end and self._pieces is None:
                self._head = bytes(view[pos:end])
        return frames

    def _size(self, buf: bytes | memoryview, pos: int) -> int:
        (size,) = FRAME_SIZE.unpack_from(buf, pos)
        if size < 0:
            raise FrameTooLargeError(f"negative frame size {size}")
        if size > self.max_frame_bytes:
            raise FrameTooLargeError(
                f"frame of {size} bytes exceeds the maximum request size of {self.max_frame_bytes} bytes"
            )
        return int(size)

    def _start(
        self,
        data: bytes | bytearray | memoryview,
        view: memoryview,
        pos: int,
        end: int,
        size: int,
        frames: list[bytes],
    ) -> int:
        """A frame of ``size`` starts at ``pos``: taken whole if ``view`` holds it, else begun.
        Returns where the next frame starts (``end`` if this one continues)."""
        if end - pos >= size:
            frames.append(_piece(data, view, pos, pos + size))
            return pos + size
        self._pieces = [_piece(data, view, pos, end)]
        self._size_wanted = size
        self._filled = end - pos
        return end


def _piece(data: bytes | bytearray | memoryview, view: memoryview, start: int, stop: int) -> bytes:
    """``data[start:stop]`` as ``bytes``: ``data`` itself when it is that already (no copy)."""
    if start == 0 and stop == len(view) and type(data) is bytes:
        return data
    return bytes(view[start:stop])
