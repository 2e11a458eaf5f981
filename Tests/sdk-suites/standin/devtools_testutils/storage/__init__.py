"""The storage part of the stand-in: the base class the Blob tests derive from, with the
helpers they call (devtools_testutils/__init__.py says what the stand-in is)."""
import functools
import inspect
import logging
import math
import os
import random
import zlib
from datetime import datetime, timedelta
from io import StringIO

import pytest

from .. import AzureRecordedTestCase, FakeTokenCredential

LOGGING_FORMAT = "%(asctime)s %(name)-20s %(levelname)-5s %(message)s"


class StorageRecordedTestCase(AzureRecordedTestCase):
    def setup_class(cls):
        cls.logger = logging.getLogger("azure.storage")
        cls.sas_token = None

    def setup_method(self, _):
        self.logger = logging.getLogger("azure.storage")

    def connection_string(self, account, key):
        suffix = os.environ.get("ACCOUNT_URL_SUFFIX", "core.windows.net")
        return f"DefaultEndpointsProtocol={os.environ.get('PROTOCOL', 'https')};AccountName={account};AccountKey={key};EndpointSuffix={suffix}"

    def account_url(self, account, service):
        """`https://<account>.<service>.<suffix>`: the runner points the suffix at the emulator."""
        return f"{os.environ.get('PROTOCOL', 'https')}://{account}.{service}.{os.environ.get('ACCOUNT_URL_SUFFIX', 'core.windows.net')}"

    def enable_logging(self):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(LOGGING_FORMAT))
        self.logger.handlers = [handler]
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = True
        self.logger.disabled = False

    def disable_logging(self):
        self.logger.propagate = False
        self.logger.disabled = True
        self.logger.handlers = []

    def configure_logging(self):
        self.disable_logging()

    def get_random_bytes(self, size):
        # As the SDK's tooling: the same bytes every run.
        return b"a" * size

    def get_random_text_data(self, size):
        """Text of at least `size` characters, the same for one test on every run."""
        generator = random.Random(zlib.adler32(self.qualified_test_name.encode()) & 0xFFFFFFFF)
        words = ["hello", "world", "python", "啊齄丂狛狜"]
        text = ""
        while len(text) < size:
            text += " " + words[int(generator.random() * (len(words) - 1))]
        return text

    def assertNamedItemInContainer(self, container, item_name, msg=None):
        for item in container:
            if isinstance(item, str):
                if item == item_name:
                    return
            elif isinstance(item, dict):
                if item.get("name") == item_name:
                    return
            elif getattr(item, "name", None) == item_name:
                return
            elif getattr(item, "snapshot", None) == item_name:
                return
        pytest.fail(f"{item_name!r} not found in {[str(c) for c in container]}")

    def assertNamedItemNotInContainer(self, container, item_name, msg=None):
        for item in container:
            if getattr(item, "name", None) == item_name:
                pytest.fail(f"{item_name!r} unexpectedly found in {container!r}")

    def assert_upload_progress(self, size, max_chunk_size, progress, unknown_size=False):
        total = None if unknown_size else size
        last = size % max_chunk_size
        assert len(progress) == math.ceil(size / max_chunk_size)
        for current, reported_total in progress:
            assert current % max_chunk_size == 0 or current % max_chunk_size == last
            assert reported_total == total

    def assert_download_progress(self, size, max_chunk_size, max_get_size, progress):
        if size <= max_get_size:
            assert len(progress) == 1
            return
        last = (size - max_get_size) % max_chunk_size
        assert len(progress) == 1 + math.ceil((size - max_get_size) / max_chunk_size)
        for current, total in progress[1:]:
            assert current % max_chunk_size == 0 or current % max_chunk_size == last
            assert total == size

    def generate_oauth_token(self):
        return self.get_credential()

    def generate_fake_token(self):
        return FakeTokenCredential()

    def get_datetime_variable(self, variables, name, dt):
        text = variables.setdefault(name, dt.isoformat())
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")


class LogCaptured:
    """Captures what the `azure.storage` logger says inside a `with` block."""

    def __init__(self, test_case=None):
        self.test_case = test_case

    def __enter__(self):
        self.test_case.enable_logging()
        self.stream = StringIO()
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(logging.Formatter(LOGGING_FORMAT))
        self.logger = logging.getLogger("azure.storage")
        self.logger.level = logging.DEBUG
        self.logger.addHandler(self.handler)
        return self.stream

    def __exit__(self, *args):
        self.logger.removeHandler(self.handler)
        self.stream.close()
        self.test_case.configure_logging()


def _parametrized(names):
    """A decorator that hands pytest's parameters `names` to a recorded test positionally."""

    def decorate(fn):
        if inspect.iscoroutinefunction(fn):
            async def async_wrapper(self, *values, **kwargs):
                return await fn(self, *values, **kwargs)
            wrapper = async_wrapper
        else:
            def wrapper(self, *values, **kwargs):
                return fn(self, *values, **kwargs)
        functools.update_wrapper(wrapper, fn)
        return wrapper

    return decorate


def GenericTestProxyParametrize1():
    return _parametrized(["a"])


def GenericTestProxyParametrize2():
    return _parametrized(["a", "b"])
