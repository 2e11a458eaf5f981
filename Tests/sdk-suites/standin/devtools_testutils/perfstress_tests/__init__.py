"""The streams the SDK's tests upload from (devtools_testutils/__init__.py says what the stand-in is)."""
import io


def get_random_bytes(size):
    return b"a" * size


class RandomStream(io.RawIOBase):
    """A readable stream of `length` bytes that never holds them all."""

    def __init__(self, length, initial_buffer_length=1024 * 1024):
        super().__init__()
        self._length = length
        self._position = 0
        self._chunk = get_random_bytes(initial_buffer_length)

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._position

    def seek(self, offset, whence=0):
        if whence == 0:
            self._position = offset
        elif whence == 1:
            self._position += offset
        else:
            self._position = self._length + offset
        return self._position

    def reset(self):
        self._position = 0

    def read(self, size=-1):
        remaining = self._length - self._position
        if remaining <= 0:
            return b""
        size = remaining if size is None or size < 0 else min(size, remaining)
        out = bytearray()
        while len(out) < size:
            out += self._chunk[: size - len(out)]
        self._position += size
        return bytes(out)

    def readinto(self, buffer):
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def remaining(self):
        return self._length - self._position


class AsyncRandomStream(RandomStream):
    async def read(self, size=-1):
        return RandomStream.read(self, size)


class WriteStream(io.RawIOBase):
    """A writable stream that counts what it is given and keeps nothing."""

    def __init__(self):
        super().__init__()
        self._position = 0

    def writable(self):
        return True

    def write(self, data):
        self._position += len(data)
        return len(data)

    def seekable(self):
        return True

    def tell(self):
        return self._position

    def seek(self, offset, whence=0):
        self._position = offset if whence == 0 else self._position + offset
        return self._position


class PerfStressTest:
    """Only named by the SDK's performance tests, which the suites do not run."""
