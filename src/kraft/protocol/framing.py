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


def frame(payload: bytes | bytearray | memoryview) -> bytes:
    """Prefix ``payload`` with its int32 size."""
    return b"".join((_SIZE.pack(len(payload)), payload))


class FrameDecoder:
    """Accumulates bytes and yields complete frames.

    Args:
        max_frame_bytes: the largest frame body accepted (Kafka's ``socket.request.max.bytes``).
    """

    __slots__ = ("_buf", "max_frame_bytes")

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._buf = bytearray()
        self.max_frame_bytes = max_frame_bytes

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """Add ``data`` and return every frame now complete, in order.

        Raises:
            FrameTooLargeError: a size prefix is negative or larger than ``max_frame_bytes``. The
                decoder is then unusable: the stream has lost its framing and must be closed.
        """
        self._buf += data
        frames: list[bytes] = []
        pos = 0
        buf = self._buf
        while len(buf) - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if size < 0:
                raise FrameTooLargeError(f"negative frame size {size}")
            if size > self.max_frame_bytes:
                raise FrameTooLargeError(
                    f"frame of {size} bytes exceeds the maximum request size of {self.max_frame_bytes} bytes"
                )
            if len(buf) - pos - 4 < size:
                break
            # One copy out of the buffer (a bytearray slice would copy twice).
            with memoryview(buf) as view:
                frames.append(bytes(view[pos + 4 : pos + 4 + size]))
            pos += 4 + size
        if pos:
            del buf[:pos]
        return frames
