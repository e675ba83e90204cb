"""The server under test: a real agentplane (``serve --demo``) that the caller started, at AGENTPLANE_URL
(test/clients/python-client.test.ts starts one on loopback and runs this suite against it)."""

import os

import pytest

from agentplane_client import Client


@pytest.fixture(scope="session")
def base_url() -> str:
    url = os.environ.get("AGENTPLANE_URL")
    if not url:
        pytest.fail("AGENTPLANE_URL is not set: start `agentplane serve --demo` and point it there")
    return url


@pytest.fixture(scope="session")
def client(base_url: str) -> Client:
    return Client(base_url=base_url, timeout=30.0, raise_on_unexpected_status=True)
