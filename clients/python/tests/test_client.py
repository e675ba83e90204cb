"""The generated client and the hand-written event stream against a real agentplane server."""

import asyncio
import os
import re
import subprocess
import sys
from http import HTTPStatus
from pathlib import Path

import pytest

from agentplane_client import Client
from agentplane_client.api.default import (
    create_connector,
    create_schedule,
    create_secret,
    create_squad,
    delete_agent,
    delete_connector,
    delete_schedule,
    delete_secret,
    delete_squad,
    get_agent,
    get_connector,
    get_schedule,
    get_secret,
    get_squad,
    list_agents,
    list_connectors,
    send_task,
)
from agentplane_client.events import EventStreamError, follow_events
from agentplane_client.models import (
    AgentResponse,
    AgentTaskRequest,
    ConnectorCreateRequest,
    Error,
    ScheduleRequest,
    SecretCreateRequest,
    SecretCreateRequestData,
    SquadCreateRequest,
    SquadCreateRequestMembersItem,
    SquadCreateRequestMembersItemSpec,
)

ENDS = ("task_completed", "task_cancelled", "error")


async def task_events(base_url: str, agent: str) -> list:
    events = []
    async for event in follow_events(base_url, agent):
        events.append(event)
        if event.type_ in ENDS:
            return events
    return events


def test_agent_task_followed_to_completion(client: Client, base_url: str) -> None:
    created = send_task.sync_detailed(
        client=client,
        body=AgentTaskRequest(name="py-hello", instructions="@bash echo from-python > out.txt\n@say python done"),
    )
    assert created.status_code == HTTPStatus.CREATED
    assert isinstance(created.parsed, AgentResponse)
    assert created.parsed.name == "py-hello"

    events = asyncio.run(asyncio.wait_for(task_events(base_url, "py-hello"), 150))
    types = [str(e.type_) for e in events]
    assert types[0] == "task_started"
    assert "tool_call" in types and "tool_result" in types
    assert types[-1] == "task_completed"
    assert events[-1].payload["result"] == "python done"
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    # Resuming after the last event replays nothing already seen: the stream starts after `since`.
    async def resumed() -> list:
        got = []
        async def read() -> None:
            async for event in follow_events(base_url, "py-hello", since=seqs[-1]):
                got.append(event)
        try:
            await asyncio.wait_for(read(), 1.0)
        except TimeoutError:
            pass
        return got

    assert asyncio.run(resumed()) == []

    listed = list_agents.sync(client=client)
    assert "py-hello" in [a.name for a in listed.agents]
    agent = get_agent.sync(client=client, name="py-hello")
    assert isinstance(agent, AgentResponse)
    assert str(agent.task_status) == "Complete"


def test_connector_and_secret_create_get_delete(client: Client) -> None:
    secret = create_secret.sync_detailed(
        client=client,
        body=SecretCreateRequest(
            name="py-token",
            data=SecretCreateRequestData.from_dict({"token": "s3cr3t-value"}),
            allowed_urls=["https://mcp.example.com/"],
        ),
    )
    assert secret.status_code == HTTPStatus.CREATED, secret.content
    got = get_secret.sync(client=client, name="py-token")
    assert got.name == "py-token"
    assert "s3cr3t-value" not in get_secret.sync_detailed(client=client, name="py-token").content.decode()

    connector = create_connector.sync_detailed(
        client=client,
        body=ConnectorCreateRequest(name="py-tools", url="https://mcp.example.com/mcp", auth_secret_name="py-token", auth_secret_key="token"),
    )
    assert connector.status_code == HTTPStatus.CREATED, connector.content
    assert get_connector.sync(client=client, name="py-tools").url == "https://mcp.example.com/mcp"
    assert "py-tools" in [c.name for c in list_connectors.sync(client=client).connectors]

    assert delete_connector.sync_detailed(client=client, name="py-tools").status_code == HTTPStatus.OK
    gone = get_connector.sync(client=client, name="py-tools")
    assert isinstance(gone, Error) and gone.reason == "NotFound"
    assert delete_secret.sync_detailed(client=client, name="py-token").status_code == HTTPStatus.OK


def test_squad_and_schedule(client: Client) -> None:
    members = [
        SquadCreateRequestMembersItem(name=n, spec=SquadCreateRequestMembersItemSpec(instructions="@say ready"))
        for n in ("py-sq-a", "py-sq-b")
    ]
    squad = create_squad.sync_detailed(client=client, body=SquadCreateRequest(name="py-squad", members=members))
    assert squad.status_code == HTTPStatus.CREATED, squad.content
    assert get_squad.sync(client=client, name="py-squad").name == "py-squad"
    assert delete_squad.sync_detailed(client=client, name="py-squad").status_code in (HTTPStatus.OK, HTTPStatus.ACCEPTED)

    schedule = create_schedule.sync_detailed(
        client=client,
        body=ScheduleRequest(name="py-nightly", agent="py-hello", cron="0 3 * * *", instructions="@say nightly", suspend=True),
    )
    assert schedule.status_code == HTTPStatus.CREATED, schedule.content
    got = get_schedule.sync(client=client, name="py-nightly")
    assert got.cron == "0 3 * * *" and got.suspend is True
    assert delete_schedule.sync_detailed(client=client, name="py-nightly").status_code == HTTPStatus.OK


def test_refusals_are_typed(client: Client, base_url: str) -> None:
    missing = get_agent.sync_detailed(client=client, name="py-no-such-agent")
    assert missing.status_code == HTTPStatus.NOT_FOUND
    assert isinstance(missing.parsed, Error) and missing.parsed.reason == "NotFound"

    body = ConnectorCreateRequest(name="py-twice", url="https://mcp.example.com/twice")
    assert create_connector.sync_detailed(client=client, body=body).status_code == HTTPStatus.CREATED
    again = create_connector.sync_detailed(client=client, body=body)
    assert again.status_code == HTTPStatus.CONFLICT
    assert isinstance(again.parsed, Error) and again.parsed.reason == "AlreadyExists"
    delete_connector.sync(client=client, name="py-twice")

    invalid = send_task.sync_detailed(client=client, body=AgentTaskRequest(name="Not_A_Name", instructions="x"))
    assert invalid.status_code == HTTPStatus.BAD_REQUEST
    assert isinstance(invalid.parsed, Error) and invalid.parsed.reason == "Invalid"
    assert invalid.parsed.details.causes[0].field

    async def follow_missing() -> None:
        async for _ in follow_events(base_url, "py-no-such-agent"):
            pass

    with pytest.raises(EventStreamError) as refused:
        asyncio.run(follow_missing())
    assert refused.value.status == 404 and refused.value.reason == "NotFound"

    # An agent deleted while followed ends the stream with 4410 "agent deleted" (deleted once the
    # replay's first event shows the socket is open).
    async def follow_until_deleted() -> None:
        deleted = False
        async for _ in follow_events(base_url, "py-hello"):
            if not deleted:
                gone = await delete_agent.asyncio_detailed(client=Client(base_url=base_url), name="py-hello")
                assert gone.status_code in (HTTPStatus.OK, HTTPStatus.ACCEPTED)
                deleted = True

    with pytest.raises(EventStreamError) as ended:
        asyncio.run(asyncio.wait_for(follow_until_deleted(), 60))
    assert ended.value.code == 4410 and ended.value.reason == "agent deleted"


def test_readme_example_runs(base_url: str) -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    example = re.search(r"```python\n(.*?)```", readme, re.S)
    assert example, "README.md has no python example"
    ran = subprocess.run(
        [sys.executable, "-c", example.group(1)],
        env={**os.environ, "AGENTPLANE_URL": base_url},
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert ran.returncode == 0, ran.stderr
    assert "task_completed" in ran.stdout
    assert "hello from the README" in ran.stdout
