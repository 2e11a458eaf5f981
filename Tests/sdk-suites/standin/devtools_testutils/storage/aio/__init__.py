"""The async storage base class (devtools_testutils/__init__.py says what the stand-in is)."""
from .. import GenericTestProxyParametrize1, GenericTestProxyParametrize2, LogCaptured, StorageRecordedTestCase


class AsyncStorageRecordedTestCase(StorageRecordedTestCase):
    async def _to_list(self, async_iterator):
        return [item async for item in async_iterator]
