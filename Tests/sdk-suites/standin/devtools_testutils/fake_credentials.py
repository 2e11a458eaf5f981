"""Fake secrets the SDK's tests name; the runner gives the real (emulator) ones."""
import base64

STORAGE_ACCOUNT_FAKE_KEY = base64.b64encode(b"fakekey").decode()
