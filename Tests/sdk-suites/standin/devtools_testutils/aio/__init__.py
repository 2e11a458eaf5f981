"""The async half of the stand-in (devtools_testutils/__init__.py says what it is)."""
import functools
import inspect


def recorded_by_proxy_async(test):
    """Live: the test as it is."""

    @functools.wraps(test)
    async def record_wrap(*args, **kwargs):
        parameters = inspect.signature(test).parameters
        if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            kwargs = {k: v for k, v in kwargs.items() if k in parameters}
        return await test(*args, **kwargs)

    return record_wrap
