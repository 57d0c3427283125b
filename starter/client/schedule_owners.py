"""Whose schedule is whose, asked of Temporal: a `ResearchOwner` keyword search attribute on every
standing research, so one user's list is one visibility query instead of a walk over every
schedule in the namespace.

The attribute is registered on first use (`OperatorService.AddSearchAttributes`, idempotent), so the
dev server, docker compose and a fresh namespace need no setup step. Where registering is not
allowed (Temporal Cloud registers attributes through its own console: add `ResearchOwner` as
Keyword there), listing falls back to the walk, which is correct, only slower. Schedules created
before the attribute existed have none; they are found by `ResearchOwner IS NULL` and read from
their memo, as before.
"""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError

OWNER_ATTRIBUTE = "ResearchOwner"
OWNER_KEY = SearchAttributeKey.for_keyword(OWNER_ATTRIBUTE)
#: Per client (and so per namespace): whether the attribute can be used.
_ready: dict[int, bool] = {}


async def owner_attribute_ready(client: Client) -> bool:
    """Whether `ResearchOwner` exists in the client's namespace, registering it if it does not."""
    key = id(client)
    if key not in _ready:
        _ready[key] = await _register(client)
    return _ready[key]


async def _register(client: Client) -> bool:
    try:
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
        if OWNER_ATTRIBUTE in listed.custom_attributes:
            return True
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(
                namespace=client.namespace,
                search_attributes={OWNER_ATTRIBUTE: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD},
            )
        )
        return True
    except RPCError as err:
        return "already" in err.message.lower()


def owner_attributes(owner: str) -> TypedSearchAttributes:
    return TypedSearchAttributes([SearchAttributePair(OWNER_KEY, owner)])


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def owner_query(owner: str) -> str:
    return f"{OWNER_ATTRIBUTE} = {_quoted(owner)}"


#: The schedules made before the attribute: their owner is only in their memo.
UNMARKED_QUERY = f"{OWNER_ATTRIBUTE} IS NULL"


async def ids_listed(client: Client, query: str | None) -> list[tuple[str, Any]]:
    """(id, listed schedule) for every schedule QUERY finds (None: all of them)."""
    return [(item.id, item) async for item in await client.list_schedules(query)]
