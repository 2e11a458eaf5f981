"""azseed's stand-in for the Azure SDK's test tooling (`devtools_testutils`, not on PyPI), written
here from how the SDKs' own tests use it: enough for `azure-data-tables` and `azure-storage-blob`
tests to run live against `azseed emulator`. Live only: there is no recording proxy, so every
test talks to the emulator, and the recording helpers (sanitizers, matchers) do nothing.

The account, its key and its endpoints come from the environment the runner
(Tests/sdk-suites/run.py) sets; a token credential, when a test asks for one, carries a token the
runner had the local identity provider issue, which the emulator trusts."""
import functools
import hashlib
import inspect
import os
import time

import pytest
from azure.core.credentials import AccessToken


class AzureTestError(Exception):
    pass


def is_live():
    """Every test runs live, against the emulator."""
    return True


def is_live_and_not_recording():
    return True


def _recording_noop(*args, **kwargs):
    return None


def __getattr__(name):
    # add_*_sanitizer, set_*_matcher, remove_*_sanitizers…: recording helpers, meaningless live.
    if name.startswith(("add_", "set_", "remove_")):
        return _recording_noop
    raise AttributeError(name)


@pytest.fixture(scope="session")
def test_proxy():
    """The SDK's recording proxy: there is none; tests run live."""
    yield None


@pytest.fixture
def variable_recorder():
    return {}


class FakeTokenCredential:
    """A credential whose token no service accepts (the SDK's tests use it where no call is made)."""

    def __init__(self):
        self.token = AccessToken("YOU SHALL NOT PASS", 0)
        # How often a token was asked for (the SDK's retry tests count refreshes).
        self.get_token_count = 0

    def get_token(self, *scopes, **kwargs):
        self.get_token_count += 1
        return self.token

    def get_token_info(self, *scopes, **kwargs):
        from azure.core.credentials import AccessTokenInfo
        self.get_token_count += 1
        return AccessTokenInfo(self.token.token, self.token.expires_on)


class EmulatorTokenCredential:
    """A token the runner had the local identity provider issue for Azure Storage (the emulator
    trusts that provider), standing in for a live Microsoft Entra sign-in."""

    def __init__(self):
        token = os.environ.get("AZSEED_SUITE_TOKEN")
        if not token:
            raise AzureTestError("no token: run the suites through Tests/sdk-suites/run.py")
        self._token = AccessToken(token, int(os.environ.get("AZSEED_SUITE_TOKEN_EXPIRES", "0")) or int(time.time()) + 3600)

    def get_token(self, *scopes, **kwargs):
        return self._token

    def get_token_info(self, *scopes, **kwargs):
        from azure.core.credentials import AccessTokenInfo
        return AccessTokenInfo(self._token.token, self._token.expires_on)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *args):
        pass


class AsyncEmulatorTokenCredential(EmulatorTokenCredential):
    async def get_token(self, *scopes, **kwargs):
        return self._token

    async def get_token_info(self, *scopes, **kwargs):
        from azure.core.credentials import AccessTokenInfo
        return AccessTokenInfo(self._token.token, self._token.expires_on)

    async def close(self):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *args):
        pass


def get_credential(is_async=False, **kwargs):
    return AsyncEmulatorTokenCredential() if is_async else EmulatorTokenCredential()


def _test_id():
    return os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]


def resource_name(prefix, unique):
    """`prefix` and a short hash of what makes the test unique: the same name for one test and
    prefix on every run, different across tests (lowercase letters and digits, as container and
    table names allow)."""
    digest = hashlib.sha256(unique.encode("utf-8") + prefix.encode("utf-8")).hexdigest()
    return (prefix + digest)[: max(len(prefix) + 8, min(len(prefix) + 16, 63))]


class AzureRecordedTestCase:
    @property
    def is_live(self):
        return True

    @property
    def in_recording(self):
        return False

    def is_playback(self):
        return False

    @property
    def qualified_test_name(self):
        return _test_id()

    @property
    def settings(self):
        raise AzureTestError("no management settings in the emulator runs")

    def get_settings_value(self, key):
        value = os.environ.get("AZURE_" + key)
        if value is None:
            raise AzureTestError(f"AZURE_{key} is not set")
        return value

    def get_credential(self, client_class=None, **kwargs):
        return get_credential(is_async=kwargs.pop("is_async", False))

    def create_random_name(self, name):
        return resource_name(name, _test_id())

    def get_resource_name(self, name):
        return self.create_random_name(name)

    def sleep(self, seconds):
        # The Tables tests wait 10 s after deleting their tables, for Azure's deletion, which
        # goes on after it answers; the emulator's is done when it answers. Every other wait
        # (lease and SAS times, copies) is kept.
        if inspect.stack()[1].function == "_delete_all_tables":
            return
        time.sleep(seconds)

    def generate_sas(self, *args, **kwargs):
        function, arguments = args[0], args[1:]
        kwargs.pop("fake_value", None)
        return function(*arguments, **kwargs)


def _call_with_accepted(fn, args, kwargs):
    """Calls `fn` with the keyword arguments its signature takes (all of them with **kwargs)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(*args, **kwargs)
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return fn(*args, **kwargs)
    return fn(*args, **{k: v for k, v in kwargs.items() if k in parameters})


def recorded_by_proxy(test):
    """Live: the test as it is (a recording would record here)."""

    @functools.wraps(test)
    def record_wrap(*args, **kwargs):
        return _call_with_accepted(test, args, kwargs)

    return record_wrap


class _Secret:
    """A value the SDK's tooling hides from recordings: the tests read it as `.secret`."""

    def __init__(self, value):
        self.secret = value

    def __str__(self):
        return self.secret


class EnvironmentVariableOptions:
    def __init__(self, hide_secrets=None, **kwargs):
        self.hide_secrets = list(hide_secrets or [])


class EnvironmentVariableLoader:
    """Passes each named setting to the test from the environment variable of its name in upper
    case (the runner sets them to the emulator's account); names in `options.hide_secrets` as an
    object whose `.secret` is the value."""

    def __init__(self, directory, name_prefix="", options=None, preparers=None, **settings):
        self.settings = settings
        self.options = options or EnvironmentVariableOptions()

    def values(self):
        values = {}
        for key, fake in self.settings.items():
            value = os.environ.get(key.upper(), fake)
            values[key] = _Secret(value) if key in self.options.hide_secrets else value
        return values

    def __call__(self, fn):
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args, **kwargs):
                merged = {**self.values(), **kwargs}
                return await _call_with_accepted(fn, args, merged)
            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            merged = {**self.values(), **kwargs}
            return _call_with_accepted(fn, args, merged)
        return wrapper


PowerShellPreparer = EnvironmentVariableLoader


class ResponseCallback:
    """A raw response hook that changes a response's status: every time, or the first time."""

    def __init__(self, status=None, new_status=None):
        self.status = status
        self.new_status = new_status
        self.first = True
        self.count = 0

    def override_first_status(self, response):
        if self.first and response.http_response.status_code == self.status:
            response.http_response.status_code = self.new_status
            self.first = False
        self.count += 1

    def override_status(self, response):
        if response.http_response.status_code == self.status:
            response.http_response.status_code = self.new_status
        self.count += 1


class RetryCounter:
    """Counts the retries a retry policy reports through its `retry_hook`."""

    def __init__(self):
        self.count = 0

    def simple_count(self, retry_context, **kwargs):
        self.count += 1
