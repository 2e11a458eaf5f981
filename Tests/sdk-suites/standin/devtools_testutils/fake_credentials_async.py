from azure.core.credentials import AccessToken


class AsyncFakeCredential:
    """An async credential whose token no service accepts."""

    async def get_token(self, *scopes, **kwargs):
        return AccessToken("fake_token", 2527537086)

    async def close(self):
        pass
